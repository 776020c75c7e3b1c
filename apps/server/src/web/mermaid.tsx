// Mermaid fences drawn as diagrams, safely: the mermaid package is loaded only when a page has a fence
// (its own script from this origin, /_chopin/mermaid.js), renders with the strict security level, and the
// SVG is shown as an image (a blob: URL), where nothing in it can run or load. Source it cannot draw stays code.
import { type ReactNode, useEffect, useId, useState } from "react";

/** The global the mermaid bundle defines. */
interface MermaidApi {
	initialize(config: Record<string, unknown>): void;
	render(id: string, source: string): Promise<{ svg: string }>;
}

export const MERMAID_SCRIPT_PATH = "/_chopin/mermaid.js";

let loading: Promise<MermaidApi> | undefined;

/** Loads the mermaid bundle once per page. */
function loadMermaid(): Promise<MermaidApi> {
	loading ??= new Promise<MermaidApi>((resolve, reject) => {
		const script = document.createElement("script");
		script.src = MERMAID_SCRIPT_PATH;
		script.async = true;
		script.onload = () => {
			const mermaid = (window as unknown as { mermaid?: MermaidApi }).mermaid;
			if (!mermaid) return reject(new Error("mermaid did not load"));
			mermaid.initialize({
				startOnLoad: false,
				securityLevel: "strict",
				theme: "default",
				// Plain SVG text rather than HTML labels: the diagram is shown as an image.
				htmlLabels: false,
				flowchart: { htmlLabels: false },
				// A source it cannot draw throws (and is shown as code) instead of leaving an error drawing on the page.
				suppressErrorRendering: true,
			});
			resolve(mermaid);
		};
		script.onerror = () => reject(new Error("mermaid could not be loaded"));
		document.head.append(script);
	});
	loading.catch(() => {
		loading = undefined;
	});
	return loading;
}

/**
 * The SVG at its own size: mermaid makes it 100% wide (with a max-width style), which as an image would
 * blow a small diagram up to the column's width. Its viewBox says how large it is.
 */
export function naturalSize(svg: string): string {
	const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
	const root = doc.documentElement;
	const box = root
		.getAttribute("viewBox")
		?.trim()
		.split(/[\s,]+/)
		.map(Number);
	if (root.nodeName !== "svg" || !box || box.length !== 4 || box.some((n) => !Number.isFinite(n))) return svg;
	root.setAttribute("width", String(Math.ceil(box[2]!)));
	root.setAttribute("height", String(Math.ceil(box[3]!)));
	root.removeAttribute("style");
	return new XMLSerializer().serializeToString(root);
}

/** Renders one diagram at a time: mermaid keeps global state while it draws. */
let queue: Promise<unknown> = Promise.resolve();

export function MermaidDiagram(props: { source: string }): ReactNode {
	const id = useId().replace(/[^A-Za-z0-9_-]/g, "");
	const [url, setUrl] = useState<string | null>(null);
	const [failed, setFailed] = useState(false);
	const [expanded, setExpanded] = useState(false);

	useEffect(() => {
		let cancelled = false;
		let made: string | null = null;
		const draw = async () => {
			const mermaid = await loadMermaid();
			const { svg } = await mermaid.render(`mermaid-${id}`, props.source);
			if (cancelled) return;
			made = URL.createObjectURL(new Blob([naturalSize(svg)], { type: "image/svg+xml" }));
			setUrl(made);
		};
		const turn = queue.then(draw, draw);
		queue = turn.catch(() => {});
		turn.catch(() => {
			if (!cancelled) setFailed(true);
		});
		return () => {
			cancelled = true;
			if (made) URL.revokeObjectURL(made);
		};
	}, [id, props.source]);

	const code = (
		<pre>
			<code>{props.source}</code>
		</pre>
	);
	if (failed || !url) {
		return (
			<figure className="diagram-source" data-diagram={failed ? "failed" : "loading"}>
				<figcaption>
					{failed ? "Mermaid could not draw this diagram; its source:" : "Mermaid diagram (drawing…)"}
				</figcaption>
				{code}
			</figure>
		);
	}
	return (
		<figure className="diagram" data-diagram="drawn">
			<div className={expanded ? "diagram-frame expanded" : "diagram-frame"}>
				<img src={url} alt="Mermaid diagram (its source is below)" />
			</div>
			<div className="row">
				<button type="button" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
					{expanded ? "Collapse diagram" : "Expand diagram"}
				</button>
			</div>
			<details>
				<summary>Diagram source</summary>
				{code}
			</details>
		</figure>
	);
}
