// hlsgen: channel concatenation of two NHWC element streams (valid/ready, one element per
// transfer): for every pixel, CA elements from s0 then CB from s1 leave on m. No buffering: the
// output takes each element straight from the input whose turn it is.
module hlsgen_concat #(
    parameter int A_W = 8,
    parameter int CA = 1,
    parameter int CB = 1
) (
    input  logic           clk,
    input  logic           rst_n,
    input  logic [A_W-1:0] s0_data,
    input  logic           s0_valid,
    output logic           s0_ready,
    input  logic [A_W-1:0] s1_data,
    input  logic           s1_valid,
    output logic           s1_ready,
    output logic [A_W-1:0] m_data,
    output logic           m_valid,
    input  logic           m_ready
);
    int k;                                   // the element of the current pixel
    logic second;
    assign second = k >= CA;
    assign m_data = second ? s1_data : s0_data;
    assign m_valid = rst_n && (second ? s1_valid : s0_valid);
    assign s0_ready = rst_n && !second && m_ready;
    assign s1_ready = rst_n && second && m_ready;
    always_ff @(posedge clk) begin
        if (!rst_n) k <= 0;
        else if (m_valid && m_ready) k <= (k + 1 < CA + CB) ? k + 1 : 0;
    end
endmodule
