#!/bin/sh
# A stand-in for cosign (an outside tool, not installable here) in the installers' tests. It accepts only the
# `cosign verify-blob` call the installers make, appends its arguments to $COSIGN_STAND_IN_LOG (one per line), and
# answers from a stand-in bundle, one line written by the test:
#   stand-in-bundle <SHA-256 of the signed file> <certificate identity> <OIDC issuer>
# Valid (exit 0, "Verified OK") when the blob has that SHA-256 and the identity and issuer are the ones asked for,
# as --certificate-identity (exactly) or --certificate-identity-regexp (an extended regular expression).
set -eu
if [ -n "${COSIGN_STAND_IN_LOG:-}" ]; then printf '%s\n' "$@" >>"$COSIGN_STAND_IN_LOG"; fi

usage() {
	echo "Error: stand-in cosign: $1" >&2
	exit 2
}

[ "${1:-}" = verify-blob ] || usage "only verify-blob is expected, got: $*"
shift
bundle='' identity='' regexp='' issuer='' blob=''
while [ $# -gt 0 ]; do
	case $1 in
	--bundle | --certificate-identity | --certificate-identity-regexp | --certificate-oidc-issuer)
		[ $# -ge 2 ] || usage "$1 needs a value"
		case $1 in
		--bundle) bundle=$2 ;;
		--certificate-identity) identity=$2 ;;
		--certificate-identity-regexp) regexp=$2 ;;
		--certificate-oidc-issuer) issuer=$2 ;;
		esac
		shift 2
		;;
	-*) usage "unexpected option $1" ;;
	*)
		[ -z "$blob" ] || usage "more than one file to verify"
		blob=$1
		shift
		;;
	esac
done
if [ -z "$bundle" ] || [ -z "$blob" ] || [ -z "$issuer" ]; then
	usage "--bundle, --certificate-oidc-issuer and a file are required"
fi
[ -n "$identity" ] || [ -n "$regexp" ] || usage "--certificate-identity or --certificate-identity-regexp is required"
[ -z "$identity" ] || [ -z "$regexp" ] || usage "--certificate-identity and --certificate-identity-regexp together"

read -r kind signed_sha signed_identity signed_issuer <"$bundle" || true
if [ "${kind:-}" != stand-in-bundle ]; then
	echo "Error: bundle $bundle is not a valid bundle" >&2
	exit 1
fi
if [ "$(sha256sum "$blob" | cut -d ' ' -f 1)" != "$signed_sha" ]; then
	echo "Error: verifying blob [$blob]: invalid signature when validating ASN.1 encoded signature" >&2
	exit 1
fi
if [ "$signed_issuer" != "$issuer" ] ||
	{ [ -n "$identity" ] && [ "$signed_identity" != "$identity" ]; } ||
	{ [ -n "$regexp" ] && ! printf '%s\n' "$signed_identity" | grep -Eq -- "$regexp"; }; then
	echo "Error: none of the expected identities matched what was in the certificate, got subjects [$signed_identity] with issuer $signed_issuer" >&2
	exit 1
fi
echo "Verified OK" >&2
