// hlsgen: channel shuffle (ShuffleNet's reshape-transpose-reshape with G groups) on an NHWC
// element stream: output channel j of a pixel is input channel (j mod G) x (C/G) + j / G. A
// pixel must be complete before its first output, so two pixel buffers alternate: one loads
// while the other is sent, one element per cycle each way.
module hlsgen_channel_shuffle #(
    parameter int A_W = 8,
    parameter int C = 2,
    parameter int G = 2
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
    logic [A_W-1:0] buf_[2][C];
    logic [1:0] full;
    logic wb, rb;                            // buffer loading / buffer sending
    int wi, ri;
    assign s_ready = rst_n && !full[wb];
    assign m_valid = rst_n && full[rb];
    assign m_data = buf_[rb][(ri % G) * (C / G) + ri / G];
    always_ff @(posedge clk) begin
        if (!rst_n) begin
            full <= '0; wb <= 1'b0; rb <= 1'b0; wi <= 0; ri <= 0;
        end else begin
            if (s_valid && s_ready) begin
                buf_[wb][wi] <= s_data;
                if (wi + 1 < C) wi <= wi + 1;
                else begin
                    wi <= 0;
                    full[wb] <= 1'b1;
                    wb <= !wb;
                end
            end
            if (m_valid && m_ready) begin
                if (ri + 1 < C) ri <= ri + 1;
                else begin
                    ri <= 0;
                    full[rb] <= 1'b0;
                    rb <= !rb;
                end
            end
        end
    end
endmodule
