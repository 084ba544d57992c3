package rdmaclient

import "github.com/netlock-go/netlock/rdma/tablehandle"

// handles is where the client's table handles come from and go back to: the RMA-RW pool if the
// server's table is RMA-RW, else the ALock pool.
func (c *Client) handles() tablehandle.Source {
	return tablehandle.Source{ALock: c.pool, Table: c.tbl, RW: c.rw}
}
