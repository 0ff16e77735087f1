/*
 * What the verbs harnesses share: a hand-made ib iface (no device needed)
 * and the checks of a peer's device address against it.
 */
#ifndef OPENUCT_TEST_FUZZ_IB_H_
#define OPENUCT_TEST_FUZZ_IB_H_

#include <uct/ib/base/ib_iface.h>

/**
 * Our port, set up again from scratch: RoCE v2 with the IPv4-mapped GID
 * ::ffff:10.78.0.1 (GID index 1, MTU 1024) when @a roce, else InfiniBand
 * with GID fe80::1, LID 7 and MTU 4096. The iface is static: valid until
 * the next call.
 */
uct_ib_iface_t *fuzz_ib_port(int roce);

/**
 * Check a peer's device address from @a iface: it prints as a terminated
 * string; if reachable, it sets nothing reserved (undefined flags, an MTU
 * code that is not a verbs MTU, a LID on RoCE), the peer MTU is a verbs
 * MTU no larger than ours and the address handle carries our port (and
 * our GRH on RoCE).
 * @return whether the address is reachable.
 */
int fuzz_ib_check_device_addr(const uct_ib_iface_t *iface,
                              const uct_ib_device_addr_t *addr);

#endif
