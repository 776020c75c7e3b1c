// The sign-in page: GitHub's button in github mode; in local mode, pick or enter an account (and its password when it has one).
import { type FormEvent, type ReactNode, useEffect, useState } from "react";
import { api, describeError } from "../api";

interface AuthInfo {
	mode: "local" | "github";
	accounts?: { login: string; name: string | null; password: boolean }[];
}

/** Where to go afterwards: a path on this origin only. */
function nextPath(): string {
	const next = new URLSearchParams(location.search).get("next") ?? "/";
	return next.startsWith("/") && !next.startsWith("//") && !next.includes("\\") ? next : "/";
}

export function SignInPage(): ReactNode {
	const [info, setInfo] = useState<AuthInfo | null>(null);
	const [login, setLogin] = useState("");
	const [password, setPassword] = useState("");
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);

	useEffect(() => {
		api<AuthInfo>("GET", "/api/auth").then(
			(data) => {
				setInfo(data);
				if (data.accounts?.length === 1) setLogin(data.accounts[0]!.login);
			},
			(e: unknown) => setError(describeError(e)),
		);
	}, []);

	if (!info) return error ? <p role="alert">{error}</p> : <p aria-busy="true">Loading…</p>;

	if (info.mode === "github") {
		return (
			<section className="narrow">
				<h1>Sign in to Chopin</h1>
				<p>
					<a
						className="button primary"
						href={`/auth/github/start?${new URLSearchParams({ next: nextPath() })}`}
					>
						Sign in with GitHub
					</a>
				</p>
			</section>
		);
	}

	const chosen = info.accounts?.find((a) => a.login.toLowerCase() === login.trim().toLowerCase());
	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		setError(null);
		try {
			await api("POST", "/auth/local/sign-in", { login: login.trim(), ...(password ? { password } : {}) });
			location.assign(nextPath());
		} catch (e) {
			setError(describeError(e));
			setBusy(false);
		}
	};
	return (
		<section className="narrow">
			<h1>Sign in to Chopin</h1>
			<form onSubmit={submit} className="stack">
				{info.accounts && info.accounts.length > 0 && (
					<fieldset>
						<legend>Pick an account</legend>
						{info.accounts.map((a) => (
							<label key={a.login} className="choice">
								<input
									type="radio"
									name="account"
									value={a.login}
									checked={login === a.login}
									onChange={() => setLogin(a.login)}
								/>
								<span>
									{a.name ? `${a.name} (${a.login})` : a.login}
									{a.password ? " · password" : ""}
								</span>
							</label>
						))}
					</fieldset>
				)}
				<label>
					Account
					<input
						name="login"
						autoComplete="username"
						value={login}
						onChange={(e) => setLogin(e.target.value)}
						required
					/>
				</label>
				{(chosen?.password ?? !chosen) && (
					<label>
						Password{chosen ? "" : " (if the account has one)"}
						<input
							name="password"
							type="password"
							autoComplete="current-password"
							value={password}
							onChange={(e) => setPassword(e.target.value)}
						/>
					</label>
				)}
				{error && <p role="alert">{error}</p>}
				<button type="submit" className="primary" disabled={busy || !login.trim()}>
					Sign in
				</button>
			</form>
		</section>
	);
}
