// hlsgen: nearest-neighbour upsampling by integer factors FH x FW on an NHWC element stream:
// every input row leaves FH times, every pixel of it FW times. Two row buffers alternate: one
// loads the next input row while the other is sent, one element per cycle each way (the output
// has FH x FW times the elements, so input waits for it).
module hlsgen_upsample #(
    parameter int A_W = 8,
    parameter int W = 1,
    parameter int C = 1,
    parameter int FH = 2,
    parameter int FW = 2
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
    logic [A_W-1:0] row[2][W * C];
    logic [1:0] full;
    logic wb, rb;
    int wi;                                  // next element of the row loading
    int rep, x, f, c;                        // sending: row repeat, input pixel, pixel repeat, channel
    assign s_ready = rst_n && !full[wb];
    assign m_valid = rst_n && full[rb];
    assign m_data = row[rb][x * C + c];
    always_ff @(posedge clk) begin
        if (!rst_n) begin
            full <= '0; wb <= 1'b0; rb <= 1'b0; wi <= 0; rep <= 0; x <= 0; f <= 0; c <= 0;
        end else begin
            if (s_valid && s_ready) begin
                row[wb][wi] <= s_data;
                if (wi + 1 < W * C) wi <= wi + 1;
                else begin
                    wi <= 0;
                    full[wb] <= 1'b1;
                    wb <= !wb;
                end
            end
            if (m_valid && m_ready) begin
                if (c + 1 < C) c <= c + 1;
                else begin
                    c <= 0;
                    if (f + 1 < FW) f <= f + 1;
                    else begin
                        f <= 0;
                        if (x + 1 < W) x <= x + 1;
                        else begin
                            x <= 0;
                            if (rep + 1 < FH) rep <= rep + 1;
                            else begin
                                rep <= 0;
                                full[rb] <= 1'b0;
                                rb <= !rb;
                            end
                        end
                    end
                end
            end
        end
    end
endmodule
