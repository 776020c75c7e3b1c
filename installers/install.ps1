# Installs the chopin CLI for this Windows user: downloads chopin-windows-x64.exe, checks it against
# the release's SHA256SUMS, puts it in ~\.chopin\bin and adds that directory to the user's PATH.
# Never needs an administrator. Works in Windows PowerShell 5.1 and PowerShell 7.
#
#   irm https://<your Chopin server>/install.ps1 | iex
#
# Environment (all optional):
#   CHOPIN_VERSION       the version to install, 1.2.3 or v1.2.3 (default: the latest release)
#   CHOPIN_INSTALL_DIR   the directory chopin.exe goes in (default: ~\.chopin\bin)
#   CHOPIN_DOWNLOAD_URL  where release files are downloaded from; {version} in it stands for the
#                        version (default: the value below)
#
# Running it again installs again: it is safe to rerun, and it is how chopin is upgraded.
# Everything runs inside one function and errors are thrown, never `exit`: under `iex` an exit
# would close the person's PowerShell window.

# The Chopin server that serves this script writes its CLI_DOWNLOAD_URL here.
$ChopinDefaultDownloadUrl = 'https://github.com/chopin-app/chopin/releases/download/v{version}'

function Install-Chopin {
	param([string]$DefaultDownloadUrl)

	$ErrorActionPreference = 'Stop'
	# Windows PowerShell 5.1 redraws its progress bar per packet, which makes a 100 MB download crawl.
	$ProgressPreference = 'SilentlyContinue'
	# Windows PowerShell 5.1 may not offer TLS 1.2 by default; GitHub requires it.
	[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12

	if ([Environment]::OSVersion.Platform -ne [PlatformID]::Win32NT) {
		throw 'This script installs chopin on Windows. On Linux and macOS run: curl -fsSL <your Chopin server>/install.sh | sh'
	}
	# A 32-bit PowerShell on 64-bit Windows reports x86 and names the real processor in PROCESSOR_ARCHITEW6432.
	$machine = $env:PROCESSOR_ARCHITEW6432
	if (-not $machine) { $machine = $env:PROCESSOR_ARCHITECTURE }
	switch ($machine) {
		'AMD64' { }
		'ARM64' { Write-Host 'note: chopin has no Windows arm64 build; the x64 build runs under Windows emulation.' }
		default { throw "chopin has no Windows build for the $machine processor; builds exist for x64." }
	}
	$asset = 'chopin-windows-x64.exe'

	$version = "$env:CHOPIN_VERSION".Trim()
	if ($version.StartsWith('v')) { $version = $version.Substring(1) }
	if ($version -eq 'latest') { $version = '' }
	if ($version -and $version -notmatch '^[0-9A-Za-z.+-]+$') {
		throw "CHOPIN_VERSION=$version is not a version. Use a version such as 1.2.3."
	}

	$base = "$env:CHOPIN_DOWNLOAD_URL".Trim()
	if (-not $base) { $base = $DefaultDownloadUrl }
	$base = $base.TrimEnd('/')
	if ($version) {
		if (-not $base.Contains('{version}')) {
			throw "CHOPIN_DOWNLOAD_URL has no {version} in it, so CHOPIN_VERSION=$version cannot choose a release."
		}
		$url = $base.Replace('{version}', $version)
	} elseif ($base.EndsWith('/releases/download/v{version}')) {
		# GitHub's layout: the latest release is under /releases/latest/download.
		$url = $base.Substring(0, $base.Length - '/download/v{version}'.Length) + '/latest/download'
	} else {
		$url = $base.Replace('v{version}', 'latest').Replace('{version}', 'latest')
	}
	# Plain http only to this machine (a local server or a test), as the chopin CLI itself allows.
	if ($url -notmatch '^https://' -and $url -notmatch '^http://(localhost|127\.[0-9.]+|\[::1\])([:/]|$)') {
		throw "Refusing to download from ${url}: use an https:// URL."
	}

	$installDir = "$env:CHOPIN_INSTALL_DIR".Trim()
	if (-not $installDir) {
		$installDir = Join-Path ([Environment]::GetFolderPath('UserProfile')) '.chopin\bin'
	}
	# Relative to the current directory, with ~ expanded, as PowerShell itself would resolve it.
	$installDir = $ExecutionContext.SessionState.Path.GetUnresolvedProviderPathFromPSPath($installDir)
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
		Invoke-WebRequest -UseBasicParsing -Uri "$url/$asset" -OutFile $download
		Invoke-WebRequest -UseBasicParsing -Uri "$url/SHA256SUMS" -OutFile $sumsFile

		$expected = $null
		foreach ($line in Get-Content -LiteralPath $sumsFile) {
			if ($line -match '^([0-9a-fA-F]{64}) [ *](.+)$' -and $Matches[2] -eq $asset) {
				$expected = $Matches[1]
				break
			}
		}
		if (-not $expected) { throw "$url/SHA256SUMS lists no $asset; the release may be incomplete." }
		$actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $download).Hash
		if ($actual -ne $expected) {
			throw "$asset does not match its SHA-256 in SHA256SUMS (expected $expected, got $actual); nothing was installed."
		}

		$runs = $true
		try {
			$installedVersion = (& $download --version | Out-String).Trim()
			if ($LASTEXITCODE -ne 0) { $runs = $false }
		} catch {
			$runs = $false
		}
		if (-not $runs) { throw 'The downloaded chopin does not run on this system; nothing was installed.' }
		if ($version -and $installedVersion -ne $version) {
			Write-Warning "Asked for $version, but the downloaded chopin says it is $installedVersion."
		}

		New-Item -ItemType Directory -Force -Path $installDir | Out-Null
		if ((Test-Path -LiteralPath $target) -and (Get-FileHash -Algorithm SHA256 -LiteralPath $target).Hash -eq $actual) {
			Write-Host "chopin $installedVersion is already installed at $target"
		} else {
			# Windows cannot overwrite a running .exe but can rename it: move the old one aside, then
			# rename the new one into place (same directory, so nothing is ever half-written).
			$staged = Join-Path $installDir ('.chopin.' + [Guid]::NewGuid().ToString('N') + '.tmp')
			Copy-Item -LiteralPath $download -Destination $staged
			Get-ChildItem -LiteralPath $installDir -Filter 'chopin.exe.old-*' -ErrorAction SilentlyContinue |
				Remove-Item -Force -ErrorAction SilentlyContinue
			$aside = $null
			if (Test-Path -LiteralPath $target) {
				$aside = "$target.old-" + [Guid]::NewGuid().ToString('N')
				Move-Item -LiteralPath $target -Destination $aside
			}
			try {
				Move-Item -LiteralPath $staged -Destination $target
				$staged = $null
			} catch {
				if ($aside) { Move-Item -LiteralPath $aside -Destination $target }
				throw
			}
			# The old binary goes now unless a running chopin still holds it (then the next install removes it).
			if ($aside) { Remove-Item -LiteralPath $aside -Force -ErrorAction SilentlyContinue }
			Write-Host "chopin $installedVersion installed at $target"
			Write-Host 'A chopin daemon that is already running keeps its old version until it restarts.'
		}

		if (Add-ChopinToUserPath $installDir) {
			Write-Host "Added $installDir to your user PATH; terminals opened from now on find chopin."
		}
		$inSession = $env:Path -split ';' | Where-Object { $_.TrimEnd('\') -ieq $installDir.TrimEnd('\') }
		if (-not $inSession) { $env:Path = "$installDir;$env:Path" }
	} finally {
		if ($staged) { Remove-Item -LiteralPath $staged -Force -ErrorAction SilentlyContinue }
		Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
	}
}

# Puts the directory first on the user's PATH unless it is there already; true when it added it.
function Add-ChopinToUserPath {
	param([string]$Dir)

	# Read and write the registry value itself: [Environment]::SetEnvironmentVariable would store
	# PATH expanded (as REG_SZ), silently turning entries such as %USERPROFILE%\bin into fixed paths.
	$key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)
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
