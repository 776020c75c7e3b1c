#!/bin/sh
# Installs the chopin CLI for this user: downloads the release binary for this machine, checks it
# against the release's SHA256SUMS, and puts it in ~/.chopin/bin. Never needs root.
#
#   curl -fsSL https://<your Chopin server>/install.sh | sh
#
# Environment (all optional):
#   CHOPIN_VERSION       the version to install, 1.2.3 or v1.2.3 (default: the latest release)
#   CHOPIN_INSTALL_DIR   the directory the binary goes in (default: $HOME/.chopin/bin)
#   CHOPIN_DOWNLOAD_URL  where release files are downloaded from; {version} in it stands for the
#                        version (default: the value below)
#
# Running it again installs again: it is safe to rerun, and it is how chopin is upgraded.
set -eu

# The Chopin server that serves this script writes its CLI_DOWNLOAD_URL here.
default_download_url='https://github.com/chopin-app/chopin/releases/download/v{version}'

say() {
	printf '%s\n' "$*" >&2
}

fail() {
	say "chopin install: error: $1"
	if [ -n "${2:-}" ]; then say "chopin install: hint: $2"; fi
	exit 1
}

# Replaces every "$2" in "$1" with "$3" (no sed: the values are URLs full of sed's metacharacters).
replace_all() {
	rest=$1
	out=''
	while :; do
		case $rest in
		*"$2"*)
			out=$out${rest%%"$2"*}$3
			rest=${rest#*"$2"}
			;;
		*)
			printf '%s' "$out$rest"
			return
			;;
		esac
	done
}

detect_os() {
	case $(uname -s) in
	Linux) echo linux ;;
	Darwin) echo darwin ;;
	MINGW* | MSYS* | CYGWIN* | Windows_NT)
		fail "this script installs chopin on Linux and macOS." \
			"On Windows, run in PowerShell: irm <your Chopin server>/install.ps1 | iex"
		;;
	*) fail "chopin has no build for $(uname -s)." "Builds exist for Linux and macOS (x64, arm64) and Windows (x64)." ;;
	esac
}

detect_arch() {
	case $(uname -m) in
	x86_64 | amd64)
		# A shell under Rosetta on Apple silicon reports x86_64; the arm64 build runs natively there.
		if [ "$1" = darwin ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
			echo arm64
		else
			echo x64
		fi
		;;
	aarch64 | arm64) echo arm64 ;;
	*) fail "chopin has no build for the $(uname -m) processor." "Builds exist for x64 and arm64." ;;
	esac
}

is_musl() {
	if ls /lib/ld-musl-* >/dev/null 2>&1; then return 0; fi
	ldd --version 2>&1 | grep -qi musl
}

# The directory release files are fetched from, for a version ('' for the latest release).
release_url() {
	base=$1
	version=$2
	if [ -n "$version" ]; then
		case $base in
		*'{version}'*) replace_all "$base" '{version}' "$version" ;;
		*)
			fail "CHOPIN_DOWNLOAD_URL has no {version} in it, so CHOPIN_VERSION=$version cannot choose a release." \
				"Put {version} where the version goes, for example https://example.com/chopin/v{version}"
			;;
		esac
		return
	fi
	case $base in
	*/releases/download/v'{version}')
		# GitHub's layout: the latest release is under /releases/latest/download.
		printf '%s' "${base%/download/v\{version\}}/latest/download"
		;;
	*) replace_all "$(replace_all "$base" 'v{version}' latest)" '{version}' latest ;;
	esac
}

check_url() {
	case $1 in
	https://*) ;;
	# Plain http only to this machine (a local server or a test), as the chopin CLI itself allows.
	http://localhost | http://localhost[:/]* | http://127.* | 'http://[::1]'*) ;;
	*) fail "refusing to download from $1: use an https:// URL." ;;
	esac
}

download() {
	if command -v curl >/dev/null 2>&1; then
		curl --fail --silent --show-error --location --retry 2 --output "$2" "$1" ||
			fail "could not download $1."
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1" || fail "could not download $1."
	else
		fail "neither curl nor wget is installed." "Install one of them and run this script again."
	fi
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d ' ' -f 1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d ' ' -f 1
	else
		fail "neither sha256sum nor shasum is installed, so the download cannot be checked." \
			"Install coreutils (sha256sum) or perl (shasum) and run this script again."
	fi
}

path_hint() {
	dir=$1
	say ""
	say "$dir is not on your PATH. To run chopin by name, add it:"
	case ${SHELL:-} in
	*/fish) say "  fish_add_path \"$dir\"" ;;
	*/zsh) say "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.zshrc" ;;
	*/bash) say "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.bashrc" ;;
	*) say "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.profile" ;;
	esac
	say "then open a new terminal. Until then, run $dir/chopin"
}

main() {
	os=$(detect_os)
	arch=$(detect_arch "$os")
	asset="chopin-$os-$arch"
	musl=''
	if [ "$os" = linux ] && is_musl; then
		musl=1
		say "note: this looks like a musl system (such as Alpine). chopin's Linux builds need glibc;"
		say "note: on Alpine, 'apk add gcompat' usually lets them run."
	fi

	version=${CHOPIN_VERSION:-}
	version=${version#v}
	if [ "$version" = latest ]; then version=''; fi
	case $version in
	*[!0-9A-Za-z.+-]*) fail "CHOPIN_VERSION=$version is not a version." "Use a version such as 1.2.3." ;;
	esac

	base=${CHOPIN_DOWNLOAD_URL:-$default_download_url}
	while :; do
		case $base in */) base=${base%/} ;; *) break ;; esac
	done
	url=$(release_url "$base" "$version")
	check_url "$url"

	install_dir=${CHOPIN_INSTALL_DIR:-}
	if [ -z "$install_dir" ]; then
		[ -n "${HOME:-}" ] || fail "HOME is not set." "Set CHOPIN_INSTALL_DIR to the directory chopin should go in."
		install_dir=$HOME/.chopin/bin
	fi
	case $install_dir in
	# A quoted ~ reaches us unexpanded: expand it as the shell would have.
	\~) install_dir=$HOME ;;
	\~/*) install_dir=$HOME/${install_dir#\~/} ;;
	/*) ;;
	*) install_dir=$(pwd)/$install_dir ;;
	esac
	target=$install_dir/chopin

	tmp=$(mktemp -d 2>/dev/null || mktemp -d -t chopin)
	staged=''
	trap 'rm -rf "$tmp"; if [ -n "$staged" ]; then rm -f "$staged"; fi' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	say "Downloading $asset ${version:-(latest release)} from $url"
	download "$url/$asset" "$tmp/$asset"
	download "$url/SHA256SUMS" "$tmp/SHA256SUMS"

	expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")
	[ -n "$expected" ] || fail "$url/SHA256SUMS lists no $asset." "The release may be incomplete; try another CHOPIN_VERSION."
	actual=$(sha256_of "$tmp/$asset")
	if [ "$actual" != "$expected" ]; then
		fail "$asset does not match its SHA-256 in SHA256SUMS (expected $expected, got $actual); nothing was installed." \
			"Run this script again; if it fails the same way, the download is being tampered with or the release is broken."
	fi

	chmod 755 "$tmp/$asset"
	if ! installed_version=$("$tmp/$asset" --version 2>/dev/null); then
		if [ -n "$musl" ]; then
			fail "the downloaded chopin does not run on this system (it needs glibc); nothing was installed." \
				"Install glibc compatibility (Alpine: apk add gcompat) or use a glibc-based system."
		fi
		fail "the downloaded chopin does not run on this system; nothing was installed."
	fi
	if [ -n "$version" ] && [ "$installed_version" != "$version" ]; then
		say "warning: asked for $version, but the downloaded chopin says it is $installed_version."
	fi

	mkdir -p "$install_dir" || fail "could not create $install_dir."
	if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$actual" ]; then
		say "chopin $installed_version is already installed at $target"
	else
		# Copy next to the target, then rename over it: a reader sees the old binary or the new one,
		# never half of one, and a running chopin keeps the file it started from.
		staged=$install_dir/.chopin.$$.tmp
		cp "$tmp/$asset" "$staged" || fail "could not write to $install_dir."
		chmod 755 "$staged"
		mv -f "$staged" "$target" || fail "could not replace $target."
		staged=''
		say "chopin $installed_version installed at $target"
		say "A chopin daemon that is already running keeps its old version until it restarts."
	fi

	case ":${PATH:-}:" in
	*":$install_dir:"*) ;;
	*) path_hint "$install_dir" ;;
	esac
}

main "$@"
