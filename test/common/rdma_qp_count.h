/*
 * Test programs' helper: how many queue pairs the kernel's RDMA devices
 * hold, for figures of kernel objects per connection.
 */
#ifndef TEST_COMMON_RDMA_QP_COUNT_H_
#define TEST_COMMON_RDMA_QP_COUNT_H_

/**
 * The QPs of every RDMA device together, as `rdma resource show` (the
 * iproute2 tool) counts them ("0: rxe_lo: pd 3 cq 4 qp 3 cm_id 0 ..."),
 * the kernel's own (GSI) included.
 * @return The count, or -1 when the tool is missing or fails.
 */
long test_rdma_qp_count(void);

#endif
