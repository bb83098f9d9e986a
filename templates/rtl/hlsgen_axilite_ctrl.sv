// hlsgen: the AXI4-Lite control slave of a kernel, with Vitis HLS's register map for
// `s_axilite port=return` (ap_ctrl_hs):
//   0x00 control: bit 0 ap_start (R/W; cleared when the kernel raises ap_ready), bit 1 ap_done
//        (R, cleared on read), bit 2 ap_idle (R), bit 3 ap_ready (R, cleared on read),
//        bit 7 auto_restart (R/W)
//   0x04 global interrupt enable (bit 0)
//   0x08 IP interrupt enable (bit 0 ap_done, bit 1 ap_ready)
//   0x0c IP interrupt status (bit 0 ap_done, bit 1 ap_ready; write 1 to clear)
//   0x10 + 12 k, 0x14 + 12 k: the 64-bit address of pointer argument k (an m_axi `offset=slave`
//        argument, in the kernel's argument order), low word first; k < NARG
// interrupt = GIE && |(IER & ISR). One outstanding read and one write at a time.
module hlsgen_axilite_ctrl #(
    parameter int ADDR_W = 6,
    parameter int NARG = 0,                  // pointer arguments
    localparam int NP = NARG > 0 ? NARG : 1
) (
    input  logic              clk,
    input  logic              rst_n,
    input  logic [ADDR_W-1:0] AWADDR,
    input  logic              AWVALID,
    output logic              AWREADY,
    input  logic [31:0]       WDATA,
    input  logic [3:0]        WSTRB,
    input  logic              WVALID,
    output logic              WREADY,
    output logic [1:0]        BRESP,
    output logic              BVALID,
    input  logic              BREADY,
    input  logic [ADDR_W-1:0] ARADDR,
    input  logic              ARVALID,
    output logic              ARREADY,
    output logic [31:0]       RDATA,
    output logic [1:0]        RRESP,
    output logic              RVALID,
    input  logic              RREADY,
    /* verilator lint_off SYMRSVDWORD */    // waiver: `interrupt` is the port name Vitis uses
    output logic              interrupt,
    /* verilator lint_on SYMRSVDWORD */
    // the kernel's block-level handshake
    output logic              ap_start,
    input  logic              ap_done,
    input  logic              ap_idle,
    input  logic              ap_ready,
    output logic [63:0]       ptr[NP]
);
    logic done_sticky, ready_sticky, auto_restart, gie;
    logic [1:0] ier, isr;
    logic [ADDR_W-1:0] waddr;
    logic have_addr, have_data;
    logic [31:0] wdata;
    logic [3:0] wstrb;

    // write channel: take address and data (in any order), then respond
    assign AWREADY = !have_addr && !BVALID;
    assign WREADY = !have_data && !BVALID;
    assign BRESP = 2'b00;
    assign RRESP = 2'b00;
    assign ARREADY = !RVALID;
    assign interrupt = gie && |(ier & isr);

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            have_addr <= 1'b0;
            have_data <= 1'b0;
            BVALID <= 1'b0;
            RVALID <= 1'b0;
            ap_start <= 1'b0;
            done_sticky <= 1'b0;
            ready_sticky <= 1'b0;
            auto_restart <= 1'b0;
            gie <= 1'b0;
            ier <= '0;
            isr <= '0;
            for (int k = 0; k < NP; k++) ptr[k] <= '0;
        end else begin
            if (AWVALID && AWREADY) begin
                waddr <= AWADDR;
                have_addr <= 1'b1;
            end
            if (WVALID && WREADY) begin
                wdata <= WDATA;
                wstrb <= WSTRB;
                have_data <= 1'b1;
            end
            // kernel events
            if (ap_done) begin
                done_sticky <= 1'b1;
                isr[0] <= isr[0] | ier[0];
            end
            if (ap_ready) begin
                ready_sticky <= 1'b1;
                isr[1] <= isr[1] | ier[1];
                if (!auto_restart) ap_start <= 1'b0;
            end
            // a complete write
            if (have_addr && have_data && !BVALID) begin
                have_addr <= 1'b0;
                have_data <= 1'b0;
                BVALID <= 1'b1;
                if (wstrb[0]) begin
                    case (waddr)
                        ADDR_W'('h00): begin
                            if (wdata[0]) ap_start <= 1'b1;
                            auto_restart <= wdata[7];
                        end
                        ADDR_W'('h04): gie <= wdata[0];
                        ADDR_W'('h08): ier <= wdata[1:0];
                        ADDR_W'('h0c): isr <= isr & ~wdata[1:0];
                        default: ;
                    endcase
                end
                for (int k = 0; k < NARG; k++) begin
                    for (int b = 0; b < 4; b++) begin
                        if (wstrb[b] && waddr == ADDR_W'(16 + 12 * k)) ptr[k][8 * b +: 8] <= wdata[8 * b +: 8];
                        if (wstrb[b] && waddr == ADDR_W'(20 + 12 * k)) ptr[k][32 + 8 * b +: 8] <= wdata[8 * b +: 8];
                    end
                end
            end
            if (BVALID && BREADY) BVALID <= 1'b0;
            // reads
            if (ARVALID && ARREADY) begin
                RVALID <= 1'b1;
                case (ARADDR)
                    ADDR_W'('h00): begin
                        RDATA <= {24'd0, auto_restart, 3'd0, ready_sticky, ap_idle, done_sticky, ap_start};
                        done_sticky <= ap_done;          // clear on read (unless it happens again now)
                        ready_sticky <= ap_ready;
                    end
                    ADDR_W'('h04): RDATA <= {31'd0, gie};
                    ADDR_W'('h08): RDATA <= {30'd0, ier};
                    ADDR_W'('h0c): RDATA <= {30'd0, isr};
                    default: RDATA <= '0;
                endcase
                for (int k = 0; k < NARG; k++) begin
                    if (ARADDR == ADDR_W'(16 + 12 * k)) RDATA <= ptr[k][31:0];
                    if (ARADDR == ADDR_W'(20 + 12 * k)) RDATA <= ptr[k][63:32];
                end
            end
            if (RVALID && RREADY) RVALID <= 1'b0;
        end
    end
    /* verilator lint_off UNUSEDSIGNAL */    // waiver: control registers are fields of byte lane 0
    logic [31:0] unused_w;
    assign unused_w = {wdata[31:8], wdata[6:2], wstrb[3:1]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
