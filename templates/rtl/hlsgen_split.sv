// hlsgen: one NHWC element stream (N x H x W x C, valid/ready, one element per transfer) to two
// outputs, each a strided slice of it: output j carries the elements whose (h, w, c) lie in
// [Hj0, Hj1) step HjS, [Wj0, Wj1) step WjS, [Cj0, Cj1) step CjS, in stream order (a channel
// split, a crop, or a copy to two consumers). An element either output needs leaves when every
// output that needs it has taken it (each output takes it on its own handshake); elements
// neither needs are dropped at one per cycle.
module hlsgen_split #(
    parameter int A_W = 8,
    parameter int H = 1,
    parameter int W = 1,
    parameter int C = 1,
    parameter int H00 = 0, parameter int H01 = 1, parameter int H0S = 1,
    parameter int W00 = 0, parameter int W01 = 1, parameter int W0S = 1,
    parameter int C00 = 0, parameter int C01 = 1, parameter int C0S = 1,
    parameter int H10 = 0, parameter int H11 = 1, parameter int H1S = 1,
    parameter int W10 = 0, parameter int W11 = 1, parameter int W1S = 1,
    parameter int C10 = 0, parameter int C11 = 1, parameter int C1S = 1
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [A_W-1:0] s_data,
    input  logic           s_valid,
    output logic           s_ready,
    output logic [A_W-1:0] m0_data,
    output logic           m0_valid,
    input  logic           m0_ready,
    output logic [A_W-1:0] m1_data,
    output logic           m1_valid,
    input  logic           m1_ready
);
    int h, w, c;                             // position of the element on s
    logic need0, need1, done0, done1;        // outputs that need it; have taken it already
    function automatic logic in_range(input int v, input int lo, input int hi, input int step);
        return v >= lo && v < hi && (v - lo) % step == 0;
    endfunction
    assign need0 = in_range(h, H00, H01, H0S) && in_range(w, W00, W01, W0S) && in_range(c, C00, C01, C0S);
    assign need1 = in_range(h, H10, H11, H1S) && in_range(w, W10, W11, W1S) && in_range(c, C10, C11, C1S);
    assign m0_data = s_data;
    assign m1_data = s_data;
    assign m0_valid = rst_n && s_valid && need0 && !done0;
    assign m1_valid = rst_n && s_valid && need1 && !done1;
    assign s_ready = rst_n && (!need0 || done0 || m0_ready) && (!need1 || done1 || m1_ready);
    always_ff @(posedge clk) begin
        if (!rst_n) begin
            h <= 0; w <= 0; c <= 0; done0 <= 1'b0; done1 <= 1'b0;
        end else if (s_valid && s_ready) begin
            done0 <= 1'b0;
            done1 <= 1'b0;
            if (c + 1 < C) c <= c + 1;
            else begin
                c <= 0;
                if (w + 1 < W) w <= w + 1;
                else begin
                    w <= 0;
                    h <= (h + 1 < H) ? h + 1 : 0;
                end
            end
        end else begin
            if (m0_valid && m0_ready) done0 <= 1'b1;
            if (m1_valid && m1_ready) done1 <= 1'b1;
        end
    end
endmodule
