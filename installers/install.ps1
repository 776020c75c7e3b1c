# Installs the chopin CLI for this Windows user: downloads chopin-windows-x64.exe, checks it against
# the release's SHA256SUMS (and that file's signature, when cosign is installed), puts it in
# ~\.chopin\bin and adds that directory to the user's PATH.
# Never needs an administrator. Works in Windows PowerShell 5.1 and PowerShell 7.
#
#   irm https://<your Chopin server>/install.ps1 | iex
#
# Environment (all optional):
#   CHOPIN_VERSION       the version to install, 1.2.3 or v1.2.3 (default: the latest release)
#   CHOPIN_INSTALL_DIR   the directory chopin.exe goes in (default: ~\.chopin\bin); a relative one is
#                        resolved against PowerShell's current location
#   CHOPIN_DOWNLOAD_URL  where release files are downloaded from; {version} in it stands for the
#                        version (default: the value below)
#
# Running it again installs again: it is safe to rerun, and it is how chopin is upgraded.
# Everything runs inside one function and errors are thrown, never `exit`: under `iex` an exit
# would close the person's PowerShell window. Errors read "chopin install: error [<code>]: ...",
# with the same codes as install.sh (docs/errors.md, "Installers").

# The Chopin server that serves this script writes its CLI_DOWNLOAD_URL here.
$ChopinDefaultDownloadUrl = 'https://github.com/chopin-app/chopin/releases/download/v{version}'

function Install-Chopin {
	param([string]$DefaultDownloadUrl)

	$ErrorActionPreference = 'Stop'
	# Windows PowerShell 5.1 redraws its progress bar per packet, which makes a 100 MB download crawl.
	$ProgressPreference = 'SilentlyContinue'
	# Windows PowerShell 5.1 may not offer TLS 1.2 by default; GitHub requires it.
	[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12

	# Who signs SHA256SUMS: the release workflow of chopin-app/chopin, run for the tag v<version>,
	# through GitHub's OIDC issuer (keyless Sigstore signing; docs/install.md, "Verifying a release").
	$signer = @{
		Repo = 'chopin-app/chopin'
		Identity = 'https://github.com/chopin-app/chopin/.github/workflows/release.yml@refs/tags/v'
		IdentityRegexp = '^https://github[.]com/chopin-app/chopin/[.]github/workflows/release[.]yml@refs/tags/v[0-9A-Za-z.+-]+$'
		Issuer = 'https://token.actions.githubusercontent.com'
	}

	if ([Environment]::OSVersion.Platform -ne [PlatformID]::Win32NT) {
		throw (Format-ChopinError 'platform-unsupported' 'this script installs chopin on Windows.' 'On Linux and macOS run: curl -fsSL <your Chopin server>/install.sh | sh')
	}
	# A 32-bit PowerShell on 64-bit Windows reports x86 and names the real processor in PROCESSOR_ARCHITEW6432.
	$machine = $env:PROCESSOR_ARCHITEW6432
	if (-not $machine) { $machine = $env:PROCESSOR_ARCHITECTURE }
	switch ($machine) {
		'AMD64' { }
		'ARM64' { Write-Host 'note: chopin has no Windows arm64 build; the x64 build runs under Windows emulation.' }
		default { throw (Format-ChopinError 'platform-unsupported' "chopin has no Windows build for the $machine processor." 'Builds exist for x64.') }
	}
	$asset = 'chopin-windows-x64.exe'

	$version = "$env:CHOPIN_VERSION".Trim()
	if ($version.StartsWith('v')) { $version = $version.Substring(1) }
	if ($version -eq 'latest') { $version = '' }
	if ($version -and $version -notmatch '^[0-9A-Za-z.+-]+$') {
		throw (Format-ChopinError 'version-invalid' "CHOPIN_VERSION=$version is not a version." 'Use a version such as 1.2.3.')
	}

	$base = "$env:CHOPIN_DOWNLOAD_URL".Trim()
	if (-not $base) { $base = $DefaultDownloadUrl }
	$base = $base.TrimEnd('/')
	if ($version) {
		if (-not $base.Contains('{version}')) {
			throw (Format-ChopinError 'version-not-in-url' "CHOPIN_DOWNLOAD_URL has no {version} in it, so CHOPIN_VERSION=$version cannot choose a release." 'Put {version} where the version goes, for example https://example.com/chopin/v{version}')
		}
		$url = $base.Replace('{version}', $version)
	} elseif ($base.EndsWith('/releases/download/v{version}')) {
		# GitHub's layout: the latest release is under /releases/latest/download.
		$url = $base.Substring(0, $base.Length - '/download/v{version}'.Length) + '/latest/download'
	} else {
		$url = $base.Replace('v{version}', 'latest').Replace('{version}', 'latest')
	}
	if (-not (Test-ChopinDownloadUrl $url)) {
		throw (Format-ChopinError 'url-refused' "refusing to download from ${url}: only https:// URLs, or plain http:// to this machine (localhost, 127.x.x.x or [::1]), are allowed." 'Use an https:// URL in CHOPIN_DOWNLOAD_URL.')
	}

	$installDir = "$env:CHOPIN_INSTALL_DIR".Trim()
	if (-not $installDir) {
		$installDir = Join-Path ([Environment]::GetFolderPath('UserProfile')) '.chopin\bin'
	}
	$installDir = Resolve-ChopinInstallDir $installDir
	$target = Join-Path $installDir 'chopin.exe'

	$tmp = Join-Path ([IO.Path]::GetTempPath()) ('chopin-install-' + [Guid]::NewGuid().ToString('N'))
	New-Item -ItemType Directory -Path $tmp | Out-Null
	$staged = $null
	try {
		$label = $version
		if (-not $label) { $label = '(latest release)' }
		Write-Host "Downloading $asset $label from $url"
		$download = Join-Path $tmp $asset
		$sumsFile = Join-Path $tmp 'SHA256SUMS'
		Invoke-ChopinDownload "$url/$asset" $download
		Invoke-ChopinDownload "$url/SHA256SUMS" $sumsFile
		$signed = Test-ChopinSumsSignature $url $sumsFile $version $signer

		$expected = $null
		foreach ($line in Get-Content -LiteralPath $sumsFile) {
			if ($line -match '^([0-9a-fA-F]{64}) [ *](.+)$' -and $Matches[2] -eq $asset) {
				$expected = $Matches[1]
				break
			}
		}
		if (-not $expected) {
			throw (Format-ChopinError 'checksum-missing' "$url/SHA256SUMS lists no $asset." 'The release may be incomplete; try another CHOPIN_VERSION.')
		}
		$actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
		if ($actual -ne $expected) {
			throw (Format-ChopinError 'checksum-mismatch' "$asset does not match its SHA-256 in SHA256SUMS (expected $expected, got $actual); nothing was installed." 'Run this script again; if it fails the same way, the download is being tampered with or the release is broken.')
		}

		$runs = $true
		try {
			$installedVersion = (& $download --version | Out-String).Trim()
			if ($LASTEXITCODE -ne 0) { $runs = $false }
		} catch {
			$runs = $false
		}
		if (-not $runs) {
			throw (Format-ChopinError 'binary-does-not-run' 'the downloaded chopin does not run on this system; nothing was installed.' 'If antivirus software blocked it, Windows Security > Protection history says so.')
		}
		if ($version -and $installedVersion -ne $version) {
			Write-Warning "Asked for $version, but the downloaded chopin says it is $installedVersion."
		}

		try {
			New-Item -ItemType Directory -Force -Path $installDir | Out-Null
		} catch {
			throw (Format-ChopinError 'install-dir-unwritable' "could not create $installDir ($($_.Exception.Message))." 'Set CHOPIN_INSTALL_DIR to a directory you can write to.')
		}
		if ((Test-Path -LiteralPath $target) -and (Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $actual) {
			Write-Host "chopin $installedVersion is already installed at $target"
		} else {
			# Windows cannot overwrite a running .exe but can rename it: move the old one aside, then
			# rename the new one into place (same directory, so nothing is ever half-written).
			$staged = Join-Path $installDir ('.chopin.' + [Guid]::NewGuid().ToString('N') + '.tmp')
			try {
				Copy-Item -LiteralPath $download -Destination $staged
			} catch {
				throw (Format-ChopinError 'install-dir-unwritable' "could not write to $installDir ($($_.Exception.Message))." 'Set CHOPIN_INSTALL_DIR to a directory you can write to.')
			}
			Get-ChildItem -LiteralPath $installDir -Filter 'chopin.exe.old-*' -ErrorAction SilentlyContinue |
				Remove-Item -Force -ErrorAction SilentlyContinue
			$aside = $null
			if (Test-Path -LiteralPath $target) {
				$aside = "$target.old-" + [Guid]::NewGuid().ToString('N')
				Move-ChopinFile $target $aside
			}
			try {
				Move-ChopinFile $staged $target
				$staged = $null
			} catch {
				if ($aside) { Move-ChopinFile $aside $target }
				throw
			}
			# The old binary goes now unless a running chopin still holds it (then the next install removes it).
			if ($aside) { Remove-Item -LiteralPath $aside -Force -ErrorAction SilentlyContinue }
			Write-Host "chopin $installedVersion installed at $target"
			Write-Host 'A chopin daemon that is already running keeps its old version until it restarts.'
		}
		if (-not $signed) {
			Write-Host "note: cosign is not installed, so the signature on SHA256SUMS was not checked (the SHA-256 was). To check it: gh attestation verify $target --repo $($signer.Repo), or cosign verify-blob --bundle SHA256SUMS.sigstore.json --certificate-identity $($signer.Identity)$installedVersion --certificate-oidc-issuer $($signer.Issuer) SHA256SUMS with both files from $url"
		}

		try {
			if (Add-ChopinToUserPath $installDir) {
				Write-Host "Added $installDir to your user PATH; terminals opened from now on find chopin."
			}
		} catch {
			# chopin is installed and runs by its full path: a PATH left as it was is a warning, not a failure.
			Write-Warning "chopin install: [path-not-updated] could not add $installDir to your user PATH ($($_.Exception.Message)). Add it under 'Edit environment variables for your account' (Start menu), or run $target by its full path."
		}
		$inSession = $env:Path -split ';' | Where-Object { $_.TrimEnd('\') -ieq $installDir.TrimEnd('\') }
		if (-not $inSession) { $env:Path = "$installDir;$env:Path" }
	} finally {
		if ($staged) { Remove-Item -LiteralPath $staged -Force -ErrorAction SilentlyContinue }
		Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
	}
}

# One error as both installers print it: a stable code, one sentence, and a hint when there is one.
function Format-ChopinError {
	param([string]$Code, [string]$Message, [string]$Hint)

	$text = "chopin install: error [$Code]: $Message"
	if ($Hint) { $text += "`nchopin install: hint: $Hint" }
	return $text
}

# Whether $Url may be downloaded from: any https:// URL, and plain http:// only to this machine (a
# local server or a test), as the chopin CLI itself allows. The host is parsed, not matched as a
# prefix (http://127.0.0.1.evil.example/ and http://localhost:x@evil.example/ go to another
# machine), exactly as install.sh parses it: install-ps1.test.ts runs these two expressions on
# install.sh's table of URLs. The characters are checked first and case-sensitively: .NET's
# case-insensitive matching folds some non-ASCII letters (the long s, the Kelvin sign) into ASCII.
function Test-ChopinDownloadUrl {
	param([string]$Url)

	$notUrlCharacter = '[^\]\[ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:/?#@!$&''()*+,;=%-]'
	$allowedUrl = '^(https://|http://(localhost|127(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|\[::1\])(:[0-9]{1,5})?([/?#]|$))'
	if ($Url -cmatch $notUrlCharacter) { return $false }
	return ($Url -match $allowedUrl)
}

# CHOPIN_INSTALL_DIR (or the default) as a full path on disk. A relative path, a leading ~ or a
# drive-relative C:tools is resolved against PowerShell's current location, as install.sh resolves
# one against the current directory; one that resolves outside the file system (the location is a
# registry drive such as HKCU:) is refused rather than created there.
function Resolve-ChopinInstallDir {
	param([string]$Dir)

	$provider = $null
	$drive = $null
	try {
		$full = $ExecutionContext.SessionState.Path.GetUnresolvedProviderPathFromPSPath($Dir, [ref]$provider, [ref]$drive)
	} catch {
		throw (Format-ChopinError 'install-dir-invalid' "CHOPIN_INSTALL_DIR=$Dir is not a path PowerShell can resolve ($($_.Exception.Message))." 'Set CHOPIN_INSTALL_DIR to a full path such as C:\Tools\chopin.')
	}
	if ($provider.Name -ne 'FileSystem' -or -not [IO.Path]::IsPathRooted($full)) {
		throw (Format-ChopinError 'install-dir-invalid' "CHOPIN_INSTALL_DIR=$Dir is not a directory on disk: it resolves to $full in PowerShell's $($provider.Name) provider." 'Set CHOPIN_INSTALL_DIR to a full path such as C:\Tools\chopin, or cd to a directory on disk first.')
	}
	if ($full.TrimEnd('\') -ne $Dir.TrimEnd('\')) {
		Write-Host "note: CHOPIN_INSTALL_DIR=$Dir resolves to $full"
	}
	return $full
}

function Invoke-ChopinDownload {
	param([string]$Uri, [string]$OutFile)

	try {
		Invoke-WebRequest -UseBasicParsing -Uri $Uri -OutFile $OutFile
	} catch {
		throw (Format-ChopinError 'download-failed' "could not download $Uri ($($_.Exception.Message)).")
	}
}

# Checks SHA256SUMS against its Sigstore bundle with cosign, as signed for the release v$Version
# (any release tag when $Version is empty: the latest). Fails closed: a bundle that is missing or
# does not verify throws. Returns $false, checking nothing, when cosign is not installed.
function Test-ChopinSumsSignature {
	param([string]$Url, [string]$SumsFile, [string]$Version, [hashtable]$Signer)

	$cosign = Get-Command cosign -CommandType Application -ErrorAction SilentlyContinue | Select-Object -First 1
	if (-not $cosign) { return $false }
	$bundle = "$SumsFile.sigstore.json"
	try {
		Invoke-WebRequest -UseBasicParsing -Uri "$Url/SHA256SUMS.sigstore.json" -OutFile $bundle
	} catch {
		throw (Format-ChopinError 'signature-missing' "could not download $Url/SHA256SUMS.sigstore.json, the signature of SHA256SUMS, so cosign cannot check it; nothing was installed." 'Run this script again; if the release has no SHA256SUMS.sigstore.json it was not signed: install a signed release (CHOPIN_VERSION) instead.')
	}
	if ($Version) {
		$identity = @('--certificate-identity', ($Signer.Identity + $Version))
	} else {
		$identity = @('--certificate-identity-regexp', $Signer.IdentityRegexp)
	}
	$arguments = @('verify-blob', '--bundle', $bundle) + $identity + @('--certificate-oidc-issuer', $Signer.Issuer, $SumsFile)
	# cosign reports on stderr even when all is well, and Windows PowerShell 5.1 turns a native
	# program's stderr into error records, which 'Stop' would throw on.
	$ErrorActionPreference = 'Continue'
	$output = & $cosign.Path @arguments 2>&1 | ForEach-Object { "$_" }
	if ($LASTEXITCODE -ne 0) {
		$output | ForEach-Object { Write-Host "  cosign: $_" }
		throw (Format-ChopinError 'signature-invalid' "cosign found no valid signature by $($Signer.Repo)'s release workflow on SHA256SUMS; nothing was installed." 'If cosign says why above and it is not about the signature (no network to reach Sigstore, say), fix that and run this script again; otherwise the download is being tampered with or the release is broken.')
	}
	Write-Host "SHA256SUMS is signed by $($Signer.Repo)'s release workflow (checked with cosign)."
	return $true
}

# Renames $From to $To, trying again for a while: Windows Defender (or another scanner, an indexer,
# a backup tool) opens a new .exe to look at it, and until it lets go the file cannot be renamed.
function Move-ChopinFile {
	param([string]$From, [string]$To)

	foreach ($delay in @(250, 500, 1000, 2000, 4000, 0)) {
		try {
			Move-Item -LiteralPath $From -Destination $To
			return
		} catch {
			if ($delay -eq 0) {
				throw (Format-ChopinError 'file-busy' "could not move $From to $To after trying for 8 seconds ($($_.Exception.Message))." 'Antivirus software such as Windows Defender holds a new .exe while it scans it: wait a minute and run this script again. If it keeps failing, Windows Security > Protection history says whether it was quarantined.')
			}
			Start-Sleep -Milliseconds $delay
		}
	}
}

# Puts the directory first on the user's PATH unless it is there already; true when it added it.
function Add-ChopinToUserPath {
	param([string]$Dir)

	# Read and write the registry value itself: [Environment]::SetEnvironmentVariable would store
	# PATH expanded (as REG_SZ), silently turning entries such as %USERPROFILE%\bin into fixed paths.
	$key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)
	if ($null -eq $key) {
		# Every profile normally has it; one made by a tool that skipped it does not, and Windows
		# reads a user's variables from there only.
		Write-Host 'note: your user environment (the registry key HKCU\Environment) did not exist; creating it.'
		$key = [Microsoft.Win32.Registry]::CurrentUser.CreateSubKey('Environment')
	}
	try {
		$current = [string]$key.GetValue('Path', '', [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
		$entries = @($current -split ';' | Where-Object { $_ })
		$wanted = $Dir.TrimEnd('\')
		foreach ($entry in $entries) {
			if ([Environment]::ExpandEnvironmentVariables($entry).TrimEnd('\') -ieq $wanted) { return $false }
		}
		$key.SetValue('Path', ((@($Dir) + $entries) -join ';'), [Microsoft.Win32.RegistryValueKind]::ExpandString)
	} finally {
		$key.Close()
	}
	# Setting a user variable through .NET broadcasts WM_SETTINGCHANGE, so Explorer and new
	# terminals pick up the new PATH without a sign-out.
	[Environment]::SetEnvironmentVariable('CHOPIN_INSTALL_REFRESH', '1', 'User')
	[Environment]::SetEnvironmentVariable('CHOPIN_INSTALL_REFRESH', $null, 'User')
	return $true
}

Install-Chopin -DefaultDownloadUrl $ChopinDefaultDownloadUrl
