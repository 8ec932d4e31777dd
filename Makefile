# SPDX-License-Identifier: GPL-2.0-or-later
#
# tcp_dctcp: DCTCP congestion control as an out-of-tree module.
#
#   make                  build against the running kernel (or KDIR=...)
#   make install          modules_install into updates/ + depmod
#   make dkms-install     register the sources with DKMS
#   make deb              the tcp-dctcp-dkms Debian package, in deb/ (DEB_OUT=)
#   make unit             host unit tests of the fixed-point math
#   make style            checkpatch --strict on our C
#   make sparse           build with sparse (C=2) and W=1

KERNELRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KERNELRELEASE)/build
PWD := $(shell pwd)

# The release KDIR was built for (KDIR may point at another kernel than the
# running one); install, uninstall and dkms act on that release.
TARGET_RELEASE := $(or $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null),$(KERNELRELEASE))
DEPMOD_BASE := $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH))

MODULE_NAME := tcp_dctcp
VERSION := $(shell sed -n 's/^\#define DCTCP_VERSION[[:space:]]*"\(.*\)-oot"/\1/p' tcp_dctcp.c)
DKMS_SRC := /usr/src/$(MODULE_NAME)-$(VERSION)

CHECKPATCH ?= $(firstword $(wildcard $(KDIR)/scripts/checkpatch.pl \
	/var/cache/dctcp-oot/src/linux-source-6.1/scripts/checkpatch.pl))
STYLE_FILES := tcp_dctcp.c $(filter-out include/compat.h,$(wildcard include/*.h)) \
	$(wildcard tools/testing/unit/*.c)
# compat.h exists to test LINUX_VERSION_CODE, which checkpatch flags anywhere.
STYLE_COMPAT_IGNORE := LINUX_VERSION_CODE,CONSTANT_COMPARISON

ifneq ($(V),1)
MAKEFLAGS += --no-print-directory
endif

.PHONY: all module sparse clean install uninstall dkms-install dkms-uninstall deb style unit \
	deps demo check bench mutants

all: module

module:
	@test -e "$(KDIR)/Makefile" || { echo "kernel build dir $(KDIR) missing: apt-get install linux-headers-$(KERNELRELEASE), or set KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

sparse:
	$(MAKE) -C $(KDIR) M=$(PWD) C=2 CF="-D__CHECK_ENDIAN__" W=1 modules

clean:
	@if [ -e "$(KDIR)/Makefile" ]; then $(MAKE) -C $(KDIR) M=$(PWD) clean; fi
	rm -f *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers
	$(MAKE) -C tools/testing/unit clean

install: module
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_DIR=updates modules_install
	depmod $(DEPMOD_BASE) -a $(TARGET_RELEASE)

uninstall:
	rm -f $(INSTALL_MOD_PATH)/lib/modules/$(TARGET_RELEASE)/updates/$(MODULE_NAME).ko*
	depmod $(DEPMOD_BASE) -a $(TARGET_RELEASE)

dkms-install:
	@command -v dkms >/dev/null || { echo "dkms missing: apt-get install dkms" >&2; exit 1; }
	@dkms remove -m $(MODULE_NAME) -v $(VERSION) --all >/dev/null 2>&1 || true
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/include
	install -m 0644 Kbuild tcp_dctcp.c $(DKMS_SRC)/
	install -m 0644 include/*.h $(DKMS_SRC)/include/
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' dkms.conf > $(DKMS_SRC)/dkms.conf
	dkms add -m $(MODULE_NAME) -v $(VERSION)
	dkms build -m $(MODULE_NAME) -v $(VERSION) -k $(TARGET_RELEASE)
	dkms install -m $(MODULE_NAME) -v $(VERSION) -k $(TARGET_RELEASE)

dkms-uninstall:
	dkms remove -m $(MODULE_NAME) -v $(VERSION) --all
	rm -rf $(DKMS_SRC)

DEB_OUT ?= $(PWD)/deb

deb:
	tools/packaging/build-deb.sh $(DEB_OUT)

style:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl missing: apt-get install linux-source-6.1 and unpack it, or set CHECKPATCH=" >&2; exit 1; }
	$(CHECKPATCH) --strict --no-tree --terse --show-types -f $(STYLE_FILES)
	$(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore $(STYLE_COMPAT_IGNORE) -f include/compat.h
	@rm -f .checkpatch-camelcase.*

unit:
	$(MAKE) -C tools/testing/unit check

# ---------------------------------------------------------------------------
# Lead: demo, check and bench targets go below this line.
# ---------------------------------------------------------------------------
# Everything below runs in QEMU and installs its own Debian packages first
# (scripts/install-deps.sh, root). KERNEL= picks deb-6.1 (default) or deb-6.12.

KERNEL ?= deb-6.1


deps:
	@scripts/install-deps.sh

demo: deps
	@tools/demo/run.sh $(KERNEL)

check: deps
	@tools/testing/check.sh $(SUITES)

# Every deliberately broken module and patch against the suites (long:
# one kernel build per PR_SET_MM_MAP mutant); make check runs one canary.
mutants: deps
	@rc=0; tools/testing/dctcp/mutants.sh || rc=1; \
		tools/testing/prctl/mutants.sh || rc=1; exit $$rc

bench: deps
	@tools/bench/bench.sh $(BENCH_FLAGS)
