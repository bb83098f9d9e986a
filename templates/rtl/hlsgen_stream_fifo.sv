// hlsgen: a valid/ready stream FIFO (first word falls through), DEPTH words of WIDTH bits.
// s_* is the write side, m_* the read side; a word moves on a cycle where valid && ready.
// One push and one pop per cycle. s_ready depends only on the registered count (no
// combinational path from m_ready to s_ready), so a full FIFO accepts again one cycle after a
// pop; DEPTH >= 2 sustains one word per cycle.
module hlsgen_stream_fifo #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 2
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [WIDTH-1:0] s_data,
    input  logic             s_valid,
    output logic             s_ready,
    output logic [WIDTH-1:0] m_data,
    output logic             m_valid,
    input  logic             m_ready
);
    localparam int AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam logic [AW:0] FULL = (AW + 1)'(DEPTH);
    localparam logic [AW-1:0] LAST = AW'(DEPTH - 1);

    logic [WIDTH-1:0] mem[DEPTH];
    logic [AW:0] count;
    logic [AW-1:0] rd, wr;
    logic push, pop;

    assign s_ready = count != FULL;
    assign m_valid = count != '0;
    assign m_data  = mem[rd];
    assign push    = s_valid && s_ready;
    assign pop     = m_valid && m_ready;

    always_ff @(posedge clk) begin
        if (push) mem[wr] <= s_data;
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            count <= '0;
            rd    <= '0;
            wr    <= '0;
        end else begin
            if (push) wr <= (wr == LAST) ? '0 : wr + 1'b1;
            if (pop) rd <= (rd == LAST) ? '0 : rd + 1'b1;
            if (push && !pop) count <= count + 1'b1;
            else if (pop && !push) count <= count - 1'b1;
        end
    end
endmodule
