#!/bin/sh
# Installs the chopin CLI for this user: downloads the release binary for this machine, checks it
# against the release's SHA256SUMS (and that file's signature, when cosign is installed), and puts
# it in ~/.chopin/bin. Never needs root.
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

# Who signs SHA256SUMS: the release workflow of chopin-app/chopin, run for the tag v<version>,
# through GitHub's OIDC issuer (keyless Sigstore signing; docs/install.md, "Verifying a release").
signer_repo='chopin-app/chopin'
signer_identity='https://github.com/chopin-app/chopin/.github/workflows/release.yml@refs/tags/v'
signer_identity_regexp='^https://github[.]com/chopin-app/chopin/[.]github/workflows/release[.]yml@refs/tags/v[0-9A-Za-z.+-]+$'
signer_issuer='https://token.actions.githubusercontent.com'

say() {
	printf '%s\n' "$*" >&2
}

# fail <code> <sentence> [hint]: the code is stable (docs/errors.md, "Installers"), the words may change.
fail() {
	say "chopin install: error [$1]: $2"
	if [ -n "${3:-}" ]; then say "chopin install: hint: $3"; fi
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
		fail platform-unsupported "this script installs chopin on Linux and macOS." \
			"On Windows, run in PowerShell: irm <your Chopin server>/install.ps1 | iex"
		;;
	*) fail platform-unsupported "chopin has no build for $(uname -s)." "Builds exist for Linux and macOS (x64, arm64) and Windows (x64)." ;;
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
	*) fail platform-unsupported "chopin has no build for the $(uname -m) processor." "Builds exist for x64 and arm64." ;;
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
			fail version-not-in-url "CHOPIN_DOWNLOAD_URL has no {version} in it, so CHOPIN_VERSION=$version cannot choose a release." \
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

# The characters a URL may hold (RFC 3986), listed one by one: a range such as a-z would depend on
# the locale. Anything else (a space, a quote, a backslash, non-ASCII) refuses the URL.
url_chars='][ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:/?#@!$&'\''()*+,;=%-'

# Whether $1 may be downloaded from: any https:// URL, and plain http:// only to this machine (a
# local server or a test), as the chopin CLI itself allows. The host is parsed, not matched as a
# prefix: http://127.0.0.1.evil.example/ and http://localhost:x@evil.example/ go to another
# machine. install.ps1 decides the same (install-ps1.test.ts compares the two on one table).
url_allowed() {
	case $1 in
	*[!$url_chars]*) return 1 ;;
	*://*) ;;
	*) return 1 ;;
	esac
	url_rest=${1#*://}
	case ${1%%://*} in
	[Hh][Tt][Tt][Pp][Ss]) return 0 ;;
	[Hh][Tt][Tt][Pp]) ;;
	*) return 1 ;;
	esac
	url_authority=${url_rest%%[/?#]*}
	case $url_authority in
	# user:password@host: curl connects to the host after the @, whatever comes before it.
	*@*) return 1 ;;
	\[*) url_host=${url_authority%%]*}] ;;
	*) url_host=${url_authority%%:*} ;;
	esac
	case ${url_authority#"$url_host"} in
	'' | :[0-9] | :[0-9][0-9] | :[0-9][0-9][0-9] | :[0-9][0-9][0-9][0-9] | :[0-9][0-9][0-9][0-9][0-9]) ;;
	*) return 1 ;;
	esac
	case $url_host in
	[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt] | '[::1]') return 0 ;;
	esac
	is_loopback_ipv4 "$url_host"
}

# Whether $1 is 127.a.b.c in plain decimal (0 to 255, no leading zeros: 0177.0.0.1 would be octal).
is_loopback_ipv4() {
	ip_rest=$1.
	ip_count=0
	while [ -n "$ip_rest" ]; do
		ip_part=${ip_rest%%.*}
		ip_rest=${ip_rest#*.}
		case $ip_part in
		[0-9] | [1-9][0-9] | 1[0-9][0-9] | 2[0-4][0-9] | 25[0-5]) ;;
		*) return 1 ;;
		esac
		ip_count=$((ip_count + 1))
		if [ "$ip_count" = 1 ] && [ "$ip_part" != 127 ]; then return 1; fi
	done
	[ "$ip_count" = 4 ]
}

check_url() {
	url_allowed "$1" || fail url-refused "refusing to download from $1: only https:// URLs, or plain http:// to this machine (localhost, 127.x.x.x or [::1]), are allowed." \
		"Use an https:// URL in CHOPIN_DOWNLOAD_URL."
}

# fetch <url> <file>: false when the download fails (curl or wget has said why).
fetch() {
	if command -v curl >/dev/null 2>&1; then
		curl --fail --silent --show-error --location --retry 2 --output "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1"
	else
		fail downloader-missing "neither curl nor wget is installed." "Install one of them and run this script again."
	fi
}

download() {
	fetch "$1" "$2" || fail download-failed "could not download $1."
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d ' ' -f 1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d ' ' -f 1
	else
		fail checksum-tool-missing "neither sha256sum nor shasum is installed, so the download cannot be checked." \
			"Install coreutils (sha256sum) or perl (shasum) and run this script again."
	fi
}

# Checks SHA256SUMS ($1/SHA256SUMS, downloaded to $2) against its Sigstore bundle with cosign, as
# signed for the release v$3 (any release tag when $3 is empty: the latest). Fails closed: a bundle
# that is missing or does not verify stops the install. Returns 1, checking nothing, without cosign.
verify_sums_signature() {
	command -v cosign >/dev/null 2>&1 || return 1
	bundle=$2.sigstore.json
	fetch "$1/SHA256SUMS.sigstore.json" "$bundle" ||
		fail signature-missing "could not download $1/SHA256SUMS.sigstore.json, the signature of SHA256SUMS, so cosign cannot check it; nothing was installed." \
			"Run this script again; if the release has no SHA256SUMS.sigstore.json it was not signed: install a signed release (CHOPIN_VERSION) instead."
	if [ -n "$3" ]; then
		set -- --certificate-identity "$signer_identity$3"
	else
		set -- --certificate-identity-regexp "$signer_identity_regexp"
	fi
	if ! cosign verify-blob --bundle "$bundle" "$@" --certificate-oidc-issuer "$signer_issuer" "${bundle%.sigstore.json}" >"$bundle.out" 2>&1; then
		while IFS= read -r cosign_line; do say "  cosign: $cosign_line"; done <"$bundle.out"
		fail signature-invalid "cosign found no valid signature by $signer_repo's release workflow on SHA256SUMS; nothing was installed." \
			"If cosign says why above and it is not about the signature (no network to reach Sigstore, say), fix that and run this script again; otherwise the download is being tampered with or the release is broken."
	fi
	say "SHA256SUMS is signed by $signer_repo's release workflow (checked with cosign)."
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
	*[!0-9A-Za-z.+-]*) fail version-invalid "CHOPIN_VERSION=$version is not a version." "Use a version such as 1.2.3." ;;
	esac

	base=${CHOPIN_DOWNLOAD_URL:-$default_download_url}
	while :; do
		case $base in */) base=${base%/} ;; *) break ;; esac
	done
	url=$(release_url "$base" "$version")
	check_url "$url"

	install_dir=${CHOPIN_INSTALL_DIR:-}
	if [ -z "$install_dir" ]; then
		[ -n "${HOME:-}" ] || fail home-unset "HOME is not set." "Set CHOPIN_INSTALL_DIR to the directory chopin should go in."
		install_dir=$HOME/.chopin/bin
	fi
	case $install_dir in
	# A quoted ~ reaches us unexpanded: expand it as the shell would have.
	\~) install_dir=$HOME ;;
	\~/*) install_dir=$HOME/${install_dir#\~/} ;;
	/*) ;;
	*)
		install_dir=$(pwd)/$install_dir
		say "note: CHOPIN_INSTALL_DIR=$CHOPIN_INSTALL_DIR is relative: installing into $install_dir"
		;;
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
	signed=''
	if verify_sums_signature "$url" "$tmp/SHA256SUMS" "$version"; then signed=1; fi

	expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")
	[ -n "$expected" ] || fail checksum-missing "$url/SHA256SUMS lists no $asset." "The release may be incomplete; try another CHOPIN_VERSION."
	actual=$(sha256_of "$tmp/$asset")
	if [ "$actual" != "$expected" ]; then
		fail checksum-mismatch "$asset does not match its SHA-256 in SHA256SUMS (expected $expected, got $actual); nothing was installed." \
			"Run this script again; if it fails the same way, the download is being tampered with or the release is broken."
	fi

	chmod 755 "$tmp/$asset"
	if ! installed_version=$("$tmp/$asset" --version 2>/dev/null); then
		if [ -n "$musl" ]; then
			fail binary-does-not-run "the downloaded chopin does not run on this system (it needs glibc); nothing was installed." \
				"Install glibc compatibility (Alpine: apk add gcompat) or use a glibc-based system."
		fi
		fail binary-does-not-run "the downloaded chopin does not run on this system; nothing was installed."
	fi
	if [ -n "$version" ] && [ "$installed_version" != "$version" ]; then
		say "warning: asked for $version, but the downloaded chopin says it is $installed_version."
	fi

	mkdir -p "$install_dir" || fail install-dir-unwritable "could not create $install_dir."
	if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$actual" ]; then
		say "chopin $installed_version is already installed at $target"
	else
		# Copy next to the target, then rename over it: a reader sees the old binary or the new one,
		# never half of one, and a running chopin keeps the file it started from.
		staged=$install_dir/.chopin.$$.tmp
		cp "$tmp/$asset" "$staged" || fail install-dir-unwritable "could not write to $install_dir."
		chmod 755 "$staged"
		mv -f "$staged" "$target" || fail install-failed "could not replace $target."
		staged=''
		say "chopin $installed_version installed at $target"
		say "A chopin daemon that is already running keeps its old version until it restarts."
	fi
	if [ -z "$signed" ]; then
		say "note: cosign is not installed, so the signature on SHA256SUMS was not checked (the SHA-256 was). To check it: gh attestation verify $target --repo $signer_repo, or cosign verify-blob --bundle SHA256SUMS.sigstore.json --certificate-identity $signer_identity$installed_version --certificate-oidc-issuer $signer_issuer SHA256SUMS with both files from $url"
	fi

	case ":${PATH:-}:" in
	*":$install_dir:"*) ;;
	*) path_hint "$install_dir" ;;
	esac
}

main "$@"
