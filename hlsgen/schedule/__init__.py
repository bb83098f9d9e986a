"""Scheduling: device profiles, the cost model and the InTAR-style dataflow/sequential scheduler.

    graph (IR) + Device + ScheduleOptions  ->  schedule()  ->  Schedule (stages, foldings, buffers)
"""
from .device import Device, device_names, load_device
from .schedule import Schedule, Stage, TaskPlan
from .scheduler import MODES, OBJECTIVES, ScheduleOptions, schedule

__all__ = ["Device", "device_names", "load_device", "Schedule", "Stage", "TaskPlan", "MODES", "OBJECTIVES",
           "ScheduleOptions", "schedule"]
