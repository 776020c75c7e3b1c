// The documents page: the repositories a person can read, a repository's documents (open, archive,
// unarchive), and a new document for writers.
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { api, type DocumentSummary, describeError, type Permission } from "../api";

interface Repository {
	fullName: string;
	permission: Permission;
}

const canWrite = (p: Permission | undefined) => p === "write" || p === "admin";

export function DocumentsPage(): ReactNode {
	const [repositories, setRepositories] = useState<Repository[] | null>(null);
	const [repository, setRepository] = useState<string>(
		() => new URLSearchParams(location.search).get("repository") ?? "",
	);
	const [documents, setDocuments] = useState<DocumentSummary[] | null>(null);
	const [showArchived, setShowArchived] = useState(false);
	const [error, setError] = useState<string | null>(null);

	useEffect(() => {
		api<{ repositories: Repository[] }>("GET", "/api/repositories").then(
			({ repositories }) => {
				setRepositories(repositories);
				setRepository((current) =>
					repositories.some((r) => r.fullName === current) ? current : (repositories[0]?.fullName ?? ""),
				);
			},
			(e: unknown) => setError(describeError(e)),
		);
	}, []);

	const load = useCallback(async () => {
		if (!repository) return;
		try {
			const data = await api<{ documents: DocumentSummary[] }>(
				"GET",
				`/api/documents?${new URLSearchParams({ repository })}`,
			);
			setDocuments(data.documents);
		} catch (e) {
			setError(describeError(e));
		}
	}, [repository]);

	useEffect(() => {
		setDocuments(null);
		load();
	}, [load]);

	const permission = repositories?.find((r) => r.fullName === repository)?.permission;
	const setArchived = async (doc: DocumentSummary, archived: boolean) => {
		setError(null);
		try {
			await api("POST", `/api/documents/${doc.id}/${archived ? "archive" : "unarchive"}`);
			await load();
		} catch (e) {
			setError(describeError(e));
		}
	};

	if (repositories === null) return error ? <p role="alert">{error}</p> : <p aria-busy="true">Loading…</p>;
	if (repositories.length === 0) {
		return (
			<section>
				<h1>Documents</h1>
				<p>You cannot read any repository on this server yet.</p>
			</section>
		);
	}
	const shown = (documents ?? []).filter((d) => showArchived || !d.archived);
	return (
		<section className="stack">
			<h1>Documents</h1>
			<div className="toolbar">
				<label>
					Repository{" "}
					<select value={repository} onChange={(e) => setRepository(e.target.value)}>
						{repositories.map((r) => (
							<option key={r.fullName} value={r.fullName}>
								{r.fullName}
							</option>
						))}
					</select>
				</label>
				<label className="choice">
					<input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
					Show archived
				</label>
			</div>
			{error && <p role="alert">{error}</p>}
			{documents === null ? (
				<p aria-busy="true">Loading…</p>
			) : shown.length === 0 ? (
				<p>No documents here yet.</p>
			) : (
				<ul className="document-list">
					{shown.map((doc) => (
						<li key={doc.id}>
							<a href={`/d/${doc.id}`}>{doc.title}</a>
							{doc.archived && <span className="badge">Archived</span>}
							<span className="muted">
								revision {doc.revision} · updated {new Date(doc.updatedAt).toLocaleString()}
							</span>
							{canWrite(permission) && (
								<button type="button" onClick={() => setArchived(doc, !doc.archived)}>
									{doc.archived ? "Unarchive" : "Archive"}
									<span className="visually-hidden"> {doc.title}</span>
								</button>
							)}
						</li>
					))}
				</ul>
			)}
			{canWrite(permission) && <NewDocument repository={repository} />}
		</section>
	);
}

function NewDocument(props: { repository: string }): ReactNode {
	const [title, setTitle] = useState("");
	const [error, setError] = useState<string | null>(null);
	const [busy, setBusy] = useState(false);
	const submit = async (event: FormEvent) => {
		event.preventDefault();
		setBusy(true);
		setError(null);
		try {
			const { document } = await api<{ document: DocumentSummary }>("POST", "/api/documents", {
				repository: props.repository,
				title,
				source: `# ${title.trim()}\n`,
			});
			location.assign(`/d/${document.id}`);
		} catch (e) {
			setError(describeError(e));
			setBusy(false);
		}
	};
	return (
		<form onSubmit={submit} className="stack card">
			<h2>New document in {props.repository}</h2>
			<label>
				Title
				<input
					name="title"
					value={title}
					onChange={(e) => setTitle(e.target.value)}
					maxLength={200}
					required
				/>
			</label>
			{error && <p role="alert">{error}</p>}
			<button type="submit" className="primary" disabled={busy || !title.trim()}>
				Create document
			</button>
		</form>
	);
}
