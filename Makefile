# SPDX-License-Identifier: GPL-2.0-or-later
#
# tcp_dctcp: DCTCP congestion control as an out-of-tree module.
#
#   make                  build against the running kernel (or KDIR=...)
#   make install          modules_install into updates/ + depmod
#   make dkms-install     register the sources with DKMS
#   make unit             host unit tests of the fixed-point math
#   make style            checkpatch --strict on our C

KERNELRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
PWD := $(shell pwd)

MODULE_NAME := tcp_dctcp
VERSION := $(shell sed -n 's/^\#define DCTCP_VERSION[[:space:]]*"\(.*\)-oot"/\1/p' tcp_dctcp.c)
DKMS_SRC := /usr/src/$(MODULE_NAME)-$(VERSION)

CHECKPATCH ?= $(firstword $(wildcard $(KDIR)/scripts/checkpatch.pl \
	/var/cache/dctcp-oot/src/linux-source-6.1/scripts/checkpatch.pl))
STYLE_FILES := tcp_dctcp.c $(wildcard include/*.h) $(wildcard tools/testing/unit/*.c)

ifneq ($(V),1)
MAKEFLAGS += --no-print-directory
endif

.PHONY: all module clean install uninstall dkms-install dkms-uninstall style unit

all: module

module:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C tools/testing/unit clean

install: module
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KERNELRELEASE)

uninstall:
	rm -f /lib/modules/$(KERNELRELEASE)/updates/$(MODULE_NAME).ko*
	depmod -a $(KERNELRELEASE)

dkms-install:
	@command -v dkms >/dev/null || { echo "dkms missing: apt-get install dkms" >&2; exit 1; }
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/include
	install -m 0644 Kbuild tcp_dctcp.c $(DKMS_SRC)/
	install -m 0644 include/*.h $(DKMS_SRC)/include/
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' dkms.conf > $(DKMS_SRC)/dkms.conf
	dkms add -m $(MODULE_NAME) -v $(VERSION)
	dkms build -m $(MODULE_NAME) -v $(VERSION) -k $(KERNELRELEASE)
	dkms install -m $(MODULE_NAME) -v $(VERSION) -k $(KERNELRELEASE)

dkms-uninstall:
	dkms remove -m $(MODULE_NAME) -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

style:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl missing: apt-get install linux-source-6.1 and unpack it, or set CHECKPATCH=" >&2; exit 1; }
	$(CHECKPATCH) --strict --no-tree --terse -f $(STYLE_FILES)

unit:
	$(MAKE) -C tools/testing/unit check

# ---------------------------------------------------------------------------
# Lead: demo, check and bench targets go below this line.
# ---------------------------------------------------------------------------
