// hlsgen: line buffer and sliding window on a valid/ready element stream (the streaming front
// of conv, depthwise conv and pooling, as FINN's ConvolutionInputGenerator).
//
// Input: images of H x W pixels of C channels, pixel-major (NHWC), one element per transfer.
// Output: for every output pixel (oy, ox), row-major, its window of KH x KW taps (stride SH x
// SW, dilation DH x DW, top/left padding PT/PL; bottom/right padding is whatever lies beyond
// the input) as one element per transfer, in the order
//   CHANNEL_OUTER = 0: (ky, kx, c), the reduction order of a conv's weights laid out as
//                      [o][ky][kx][c] (hlsgen_conv);
//   CHANNEL_OUTER = 1: (c, ky, kx), every channel's taps together (depthwise conv, pooling:
//                      hlsgen_window_reduce).
// A tap outside the input carries PADV (the input's zero point for conv and average pooling,
// its minimum for max pooling).
//
// The line buffer is a ring of R = (KH-1) x DH + 1 + SH rows: the rows the current output row
// reads, plus SH rows that load while it is sent. An output row is sent once its last input row
// is in; input waits only when the ring is full. So a window element leaves every cycle the
// output is ready, and input keeps pace whenever the output's rate allows. A new image loads
// after the previous image's last window has left. The ring is addressed {row slot, x, c}, each
// field a power of two wide, and row slots are counted rather than computed (y mod R), so
// addresses need no multiplier: Yosys maps none of this module to DSPs.
module hlsgen_sliding_window #(
    parameter int C = 1,
    parameter int H = 4,
    parameter int W = 4,
    parameter int KH = 3,
    parameter int KW = 3,
    parameter int SH = 1,
    parameter int SW = 1,
    parameter int DH = 1,
    parameter int DW = 1,
    parameter int PT = 0,
    parameter int PL = 0,
    parameter int OH = 4,
    parameter int OW = 4,
    parameter int A_W = 8,
    parameter logic [A_W-1:0] PADV = '0,
    parameter bit CHANNEL_OUTER = 0
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [A_W-1:0] s_data,
    input  logic           s_valid,
    output logic           s_ready,
    output logic [A_W-1:0] m_data,
    output logic           m_valid,
    input  logic           m_ready
);
    localparam int KE = (KH - 1) * DH + 1;   // rows a window spans
    localparam int R = KE + SH;              // rows in the ring
    localparam int RB = R > 1 ? $clog2(R) : 1;
    localparam int WB = W > 1 ? $clog2(W) : 1;
    localparam int CB = C > 1 ? $clog2(C) : 1;
    logic [A_W-1:0] ring[1 << (RB + WB + CB)];
    int slot_lo;                             // ring row of lo (when lo >= 0)

    // ---------------------------------------------------------------- input
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: counters are ints, the ring address takes their low bits
    int iy, ix, ic, slot_in;                 // next element to receive, and iy's ring row
    /* verilator lint_on UNUSEDSIGNAL */
    logic in_done;                           // the image is in
    int lo, hi, rows_in;                     // rows the current output row reads: [lo, hi]
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: counters are ints, the ring address takes their low bits
    int oy, ox, ky, kx, c;                   // the window element being sent
    /* verilator lint_on UNUSEDSIGNAL */
    assign lo = oy * SH - PT;
    assign hi = (lo + KE - 1 < H - 1) ? lo + KE - 1 : H - 1;
    assign rows_in = in_done ? H : iy;
    assign s_ready = !in_done && iy < (lo > 0 ? lo : 0) + R;

    // ---------------------------------------------------------------- output
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: counters are ints, the ring address takes their low bits
    int y, x;
    /* verilator lint_on UNUSEDSIGNAL */
    logic in_image;
    assign y = lo + ky * DH;
    assign x = ox * SW - PL + kx * DW;
    assign in_image = y >= 0 && y < H && x >= 0 && x < W;
    assign m_valid = rst_n && rows_in > hi;
    /* verilator lint_off WIDTHEXPAND */
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: counters are ints, the ring address takes their low bits
    int slot_y;                              // ring row of y: y itself while lo < 0 (y < KE <= R)
    /* verilator lint_on UNUSEDSIGNAL */
    assign slot_y = lo < 0 ? y : (slot_lo + ky * DH >= R ? slot_lo + ky * DH - R : slot_lo + ky * DH);
    assign m_data = in_image ? ring[{slot_y[RB-1:0], x[WB-1:0], c[CB-1:0]}] : PADV;
    /* verilator lint_on WIDTHEXPAND */

    // the window order's last element of each counter
    logic c_last, ky_last, kx_last, win_last;
    assign c_last = c == C - 1;
    assign ky_last = ky == KH - 1;
    assign kx_last = kx == KW - 1;
    assign win_last = c_last && ky_last && kx_last;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            iy <= 0; ix <= 0; ic <= 0; slot_in <= 0; in_done <= 1'b0;
            oy <= 0; ox <= 0; ky <= 0; kx <= 0; c <= 0; slot_lo <= 0;
        end else begin
            if (s_valid && s_ready) begin
                ring[{slot_in[RB-1:0], ix[WB-1:0], ic[CB-1:0]}] <= s_data;
                if (ic + 1 < C) ic <= ic + 1;
                else begin
                    ic <= 0;
                    if (ix + 1 < W) ix <= ix + 1;
                    else begin
                        ix <= 0;
                        slot_in <= (slot_in + 1 < R) ? slot_in + 1 : 0;
                        if (iy + 1 < H) iy <= iy + 1;
                        else in_done <= 1'b1;
                    end
                end
            end
            if (m_valid && m_ready) begin
                if (CHANNEL_OUTER) begin         // (c, ky, kx)
                    if (!kx_last) kx <= kx + 1;
                    else begin
                        kx <= 0;
                        if (!ky_last) ky <= ky + 1;
                        else begin
                            ky <= 0;
                            c <= c_last ? 0 : c + 1;
                        end
                    end
                end else begin                   // (ky, kx, c)
                    if (!c_last) c <= c + 1;
                    else begin
                        c <= 0;
                        if (!kx_last) kx <= kx + 1;
                        else begin
                            kx <= 0;
                            ky <= ky_last ? 0 : ky + 1;
                        end
                    end
                end
                if (win_last) begin
                    if (ox + 1 < OW) ox <= ox + 1;
                    else begin
                        ox <= 0;
                        if (oy + 1 < OH) begin
                            oy <= oy + 1;
                            // lo moves on by SH (< R): its ring row too, once it is a row
                            if (lo + SH < 0) slot_lo <= 0;
                            else if (lo < 0) slot_lo <= lo + SH;
                            else slot_lo <= (slot_lo + SH >= R) ? slot_lo + SH - R : slot_lo + SH;
                        end
                        else begin                // the image's last window: the next image may load
                            oy <= 0;
                            slot_lo <= 0;
                            iy <= 0;
                            slot_in <= 0;
                            in_done <= 1'b0;
                        end
                    end
                end
            end
        end
    end
endmodule
