// The app: which component each page of PAGE_ROUTES shows, and the signed-in person they share.
import { type ReactNode, useEffect, useState } from "react";
import { ApiError, api, describeError, goSignIn, type Me } from "./api";
import { matchPage, type PageRoute } from "./page-routes";
import { DocumentPage } from "./pages/document";
import { DocumentsPage } from "./pages/documents";
import { MachinesPage } from "./pages/machines";
import { PairingPage } from "./pages/pairing";
import { SignInPage } from "./pages/sign-in";

type PageProps = { me: Me; params: Record<string, string> };

/** One component per page; adding a page is a line here and one in page-routes.ts. */
const PAGES: Record<PageRoute["page"], (props: PageProps) => ReactNode> = {
	documents: () => <DocumentsPage />,
	document: ({ me, params }) => <DocumentPage me={me} id={params.id!} />,
	"sign-in": () => <SignInPage />,
	pairing: ({ me, params }) => <PairingPage me={me} id={params.id!} />,
	machines: () => <MachinesPage />,
};

export function App(): ReactNode {
	const match = matchPage(location.pathname);
	const [me, setMe] = useState<Me | null | undefined>(undefined);
	const [error, setError] = useState<string | null>(null);
	const needsSignIn = match?.route.signIn ?? true;

	useEffect(() => {
		if (!needsSignIn) return;
		api<Me>("GET", "/api/me").then(setMe, (e: unknown) => {
			if (e instanceof ApiError && e.status === 401) return goSignIn();
			setError(describeError(e));
		});
	}, [needsSignIn]);

	if (!match) {
		return (
			<Shell me={me ?? null}>
				<h1>There is nothing here</h1>
				<p>
					<a href="/">Go to your documents</a>
				</p>
			</Shell>
		);
	}
	if (!needsSignIn)
		return <Shell me={null}>{PAGES[match.route.page]({ me: me!, params: match.params })}</Shell>;
	if (error) {
		return (
			<Shell me={null}>
				<p role="alert">{error}</p>
			</Shell>
		);
	}
	if (!me) return <Shell me={null}>{<p aria-busy="true">Loading…</p>}</Shell>;
	return <Shell me={me}>{PAGES[match.route.page]({ me, params: match.params })}</Shell>;
}

function Shell(props: { me: Me | null; children: ReactNode }): ReactNode {
	const signOut = async () => {
		await api("POST", "/auth/sign-out").catch(() => {});
		location.assign("/sign-in");
	};
	return (
		<>
			<header className="topbar">
				<a className="brand" href="/">
					Chopin
				</a>
				{props.me && (
					<nav className="nav" aria-label="Chopin">
						<a href="/">Documents</a>
						<a href="/machines">Machines</a>
					</nav>
				)}
				{props.me && (
					<div className="who">
						<span>
							Signed in as <strong>{props.me.login}</strong>
						</span>
						<button type="button" className="link-button" onClick={signOut}>
							Sign out
						</button>
					</div>
				)}
			</header>
			<main className="page">{props.children}</main>
		</>
	);
}
