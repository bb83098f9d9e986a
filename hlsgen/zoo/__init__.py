"""Brevitas model builders (optional extra `hlsgen[zoo]`: needs torch and brevitas)."""
