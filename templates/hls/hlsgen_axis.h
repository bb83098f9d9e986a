// hlsgen: the AXI4-Stream word of the kernel's stream ports.
//
// With Vitis HLS this is Vitis's own ap_axis (TDATA, TKEEP, TSTRB, TLAST). Without Vitis (g++ C
// simulation against the ap_types headers of the hls4ml package) a struct with the same members
// stands in: the kernel and testbench touch only .data, .keep, .strb and .last.
#ifndef HLSGEN_AXIS_H
#define HLSGEN_AXIS_H

#include "hlsgen_requant.h"

#if defined(__has_include)
#if __has_include(<ap_axi_sdata.h>)
#define HLSGEN_HAVE_AP_AXI_SDATA 1
#endif
#endif

#ifdef HLSGEN_HAVE_AP_AXI_SDATA
#include <ap_axi_sdata.h>
namespace hlsgen {
template <int W> using axis_word = ap_axis<W, 0, 0, 0>;
}
#else
namespace hlsgen {
template <int W> struct axis_word {
    ap_int<W> data;
    ap_uint<(W + 7) / 8> keep;
    ap_uint<(W + 7) / 8> strb;
    ap_uint<1> last;
};
}  // namespace hlsgen
#endif

#endif
