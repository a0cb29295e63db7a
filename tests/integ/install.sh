#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make install as a packager runs it (DESTDIR): the programs, liblacuna
# with its public headers and a pkg-config file that a program compiles
# and links with, the man pages (rendered by man(1) without a warning),
# the systemd units (checked by systemd-analyze verify where it is), and
# a sample lacunad.conf that exports nothing until edited and that a
# second install keeps once edited; make uninstall removes the rest.
. "$top_srcdir/tests/lib.sh"
lt_init
lt_require_cmd make cc pkg-config

D="$LT_TMP/dest"
# a make of its own, not a part of the make check running this test
unset MAKEFLAGS MFLAGS MAKELEVEL
# the configured installation directories, as make expands them
dirs=$(make -s --no-print-directory -C "$top_builddir" -f Makefile -f - lt-print-dirs <<'MK'
lt-print-dirs:
	@echo "$(bindir) $(sbindir) $(libdir) $(includedir) $(mandir) $(sysconfdir) $(systemdsystemunitdir)"
MK
) || lt_hard "cannot read the installation directories from $top_builddir/Makefile"
read -r bindir sbindir libdir includedir mandir sysconfdir unitdir <<<"$dirs"
[[ $bindir == /* && -n $unitdir ]] || lt_hard "installation directories not understood: $dirs"
lt_log "bindir $bindir sbindir $sbindir libdir $libdir unitdir $unitdir"

# lt_install LOG: make install into $D, its output in LOG
lt_install() {
	lt_timeout 600 make -s --no-print-directory -C "$top_builddir" install DESTDIR="$D" >"$1" 2>&1
}
lt_install "$LT_TMP/install.log"
lt_check_eq "make install DESTDIR: exit status ($(tail -n 3 "$LT_TMP/install.log" | tr '\n' ' '))" 0 $?

for f in "$bindir/lacuna" "$bindir/lacunafs" "$sbindir/lacunad"; do
	lt_check "installed and executable: $f" test -x "$D$f"
done
for f in "$libdir/liblacuna.so" "$includedir/lacuna/lacuna.h" "$includedir/lacuna/ioctl.h" \
	"$libdir/pkgconfig/lacuna.pc" "$mandir/man1/lacuna.1" "$mandir/man8/lacunafs.8" \
	"$mandir/man8/lacunad.8" "$mandir/man5/lacunad.conf.5" "$sysconfdir/lacunad.conf"; do
	lt_check "installed: $f" test -s "$D$f"
done
LD_LIBRARY_PATH="$D$libdir" "$D$bindir/lacuna" --version >"$LT_TMP/version" 2>&1
lt_check "the installed lacuna runs" grep -q "^lacuna [0-9]" "$LT_TMP/version"

# ---- pkg-config and a program built against the installed library
export PKG_CONFIG_PATH="$D$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D"
flags=$(pkg-config --cflags --libs lacuna 2>&1)
lt_check_eq "pkg-config --cflags --libs lacuna: exit status ($flags)" 0 $?
lt_check "pkg-config: -I of the installed headers" grep -q -- "-I$D$includedir" <<<"$flags"
lt_check "pkg-config: -llacuna" grep -q -- "-llacuna" <<<"$flags"
lt_check_eq "pkg-config --modversion" "$("$top_builddir/tools/lacuna" --version | cut -d' ' -f2)" \
	"$(pkg-config --modversion lacuna)"
cat >"$LT_TMP/prog.c" <<'C'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <lacuna/lacuna.h>

int main(int argc, char **argv)
{
	struct lacuna_client *c = NULL;
	int fd = open(argv[1], O_RDONLY);
	int rc = lacuna_client_open(fd, 0, &c);

	/* a file outside lacunafs: no sparse-read ioctl */
	printf("abi %d: %s\n", LACUNA_ABI_VERSION, rc == -ENOTTY ? "ENOTTY" : "other");
	lacuna_client_close(c);
	return argc != 2;
}
C
# shellcheck disable=SC2086 # flags is a list of compiler arguments
cc -Wall -Werror -o "$LT_TMP/prog" "$LT_TMP/prog.c" $flags >"$LT_TMP/cc.log" 2>&1
lt_check_eq "a program compiles and links with pkg-config's flags ($(head -c 300 "$LT_TMP/cc.log"))" 0 $?
out=$(LD_LIBRARY_PATH="$D$libdir" "$LT_TMP/prog" "$LT_TMP/prog.c" 2>&1)
lt_check "it runs against the installed liblacuna ($out)" grep -q "^abi [0-9]*: ENOTTY$" <<<"$out"

# ---- man pages
for page in man1/lacuna.1 man8/lacunafs.8 man8/lacunad.8 man5/lacunad.conf.5; do
	name=$(basename "$page")
	if ! command -v man >/dev/null; then
		lt_log "man not installed (package man-db): $name not rendered"
		continue
	fi
	out=$(MANWIDTH=80 man --warnings -l "$D$mandir/$page" 2>"$LT_TMP/man.err")
	lt_check "man -l $name: the NAME section" grep -qE "^ +${name%.*} [-—]" <<<"$out"
	lt_check_eq "man -l $name: no warnings" "" "$(head -c 300 "$LT_TMP/man.err")"
done

# ---- systemd units, their paths pointing into DESTDIR for the check
if [ "$unitdir" = no ]; then
	lt_log "configured --without-systemdsystemunitdir: no units"
else
	for u in lacunad.service lacunafs@.service; do
		lt_check "installed: $unitdir/$u" test -s "$D$unitdir/$u"
	done
	lt_check "lacunad.service starts the installed lacunad" \
		grep -q "^ExecStart=$sbindir/lacunad --config $sysconfdir/lacunad.conf" "$D$unitdir/lacunad.service"
	if command -v systemd-analyze >/dev/null; then
		mkdir -p "$LT_TMP/units"
		for u in lacunad.service lacunafs@.service; do
			sed -e "s|$sbindir/|$D$sbindir/|" -e "s|$bindir/|$D$bindir/|" \
				"$D$unitdir/$u" >"$LT_TMP/units/$u"
		done
		for u in lacunad.service lacunafs@test.service; do
			out=$(systemd-analyze verify --man=no "$LT_TMP/units/$u" 2>&1)
			rc=$?
			lt_check_eq "systemd-analyze verify $u: exit status, no complaint" "0:" "$rc:$out"
		done
	else
		lt_log "systemd-analyze not installed: units not verified"
	fi
fi

# ---- the sample configuration: nothing exported until edited, kept when edited
conf="$D$sysconfdir/lacunad.conf"
lt_check "lacunad.conf: from the example" grep -q "^listen = 0.0.0.0:2049" "$conf"
lt_check_fails "lacunad.conf: no export line uncommented" grep -qE '^[/"]' "$conf"
out=$(LD_LIBRARY_PATH="$D$libdir" "$D$sbindir/lacunad" --config "$conf" -f 2>&1)
lt_check "lacunad refuses it until an export is added" grep -q "no exports" <<<"$out"
echo "# edited" >>"$conf"
lt_install "$LT_TMP/install2.log"
lt_check_eq "a second make install: exit status" 0 $?
lt_check "a second make install keeps an edited lacunad.conf" grep -q "^# edited" "$conf"
lt_check "... and says so" grep -q "keeping the existing" "$LT_TMP/install2.log"

lt_timeout 600 make -s --no-print-directory -C "$top_builddir" uninstall DESTDIR="$D" \
	>"$LT_TMP/uninstall.log" 2>&1
lt_check_eq "make uninstall: exit status" 0 $?
left=$(find "$D" -type f | sed "s|^$D||")
lt_check_eq "make uninstall leaves only the edited lacunad.conf" "$sysconfdir/lacunad.conf" "$left"
lt_done
