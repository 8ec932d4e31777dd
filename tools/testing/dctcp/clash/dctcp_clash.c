// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dctcp_clash: test-only module that registers Reno under a name tcp_dctcp
 * also registers, so that the tcp_dctcp selftests can make its
 * registration collide (dctcp_register.sh).
 *
 *   insmod dctcp_clash.ko name=dctcp-reno
 *
 * Parameters (read-only once loaded):
 *   name         the congestion control name to register (default
 *                "dctcp-reno")
 *   name_offset  offsetof(struct tcp_congestion_ops, name) in the running
 *                kernel, so that a kprobe event on
 *                tcp_register_congestion_control() can fetch the name
 *                being registered: +OFFSET($arg1):string
 */
#include <linux/module.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <net/tcp.h>

static char clash_name[TCP_CA_NAME_MAX] = "dctcp-reno";
module_param_string(name, clash_name, sizeof(clash_name), 0444);
MODULE_PARM_DESC(name, "congestion control name to register");

static unsigned int name_offset = offsetof(struct tcp_congestion_ops, name);
module_param(name_offset, uint, 0444);
MODULE_PARM_DESC(name_offset, "offsetof(struct tcp_congestion_ops, name)");

static struct tcp_congestion_ops clash_ops __read_mostly = {
	.ssthresh	= tcp_reno_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.owner		= THIS_MODULE,
};

static int __init clash_register(void)
{
	strscpy(clash_ops.name, clash_name, sizeof(clash_ops.name));
	return tcp_register_congestion_control(&clash_ops);
}

static void __exit clash_unregister(void)
{
	tcp_unregister_congestion_control(&clash_ops);
}

module_init(clash_register);
module_exit(clash_unregister);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Reno under a name of tcp_dctcp's, for its tests only");
