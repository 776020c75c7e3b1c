// Mermaid fences drawn as diagrams, safely: a hidden, sandboxed frame with no origin of its own
// (/_chopin/mermaid-frame, made only when a page has a fence) runs the mermaid package with the strict
// security level, and the page shows the SVG it sends back as an image (a blob: URL), where nothing in
// it can run or load. Source mermaid cannot draw stays code.
import { type ReactNode, useEffect, useId, useState } from "react";

export const MERMAID_SCRIPT_PATH = "/_chopin/mermaid.js";
export const MERMAID_FRAME_PATH = "/_chopin/mermaid-frame";
export const MERMAID_FRAME_SCRIPT_PATH = "/_chopin/mermaid-frame.js";

type Reply = { id: string; svg?: string; error?: string };

interface Renderer {
	draw(source: string): Promise<string>;
}

let renderer: Promise<Renderer> | undefined;

/** The renderer frame, made once per page on the first diagram. */
function loadRenderer(): Promise<Renderer> {
	renderer ??= new Promise<Renderer>((resolve, reject) => {
		const frame = document.createElement("iframe");
		// Scripts only: no same origin, so the frame reaches neither this page nor its cookies.
		frame.setAttribute("sandbox", "allow-scripts");
		frame.src = MERMAID_FRAME_PATH;
		frame.className = "diagram-renderer";
		frame.title = "Diagram renderer";
		frame.setAttribute("aria-hidden", "true");
		frame.tabIndex = -1;
		const waiting = new Map<string, { resolve(svg: string): void; reject(error: Error): void }>();
		let next = 0;
		window.addEventListener("message", (event) => {
			if (event.source !== frame.contentWindow) return;
			const data = event.data as Reply & { ready?: boolean };
			if (data?.ready) {
				resolve({
					draw(source) {
						next += 1;
						const id = String(next);
						return new Promise((res, rej) => {
							waiting.set(id, { resolve: res, reject: rej });
							frame.contentWindow?.postMessage({ id, source }, "*");
						});
					},
				});
				return;
			}
			const pending = waiting.get(data?.id);
			if (!pending) return;
			waiting.delete(data.id);
			if (typeof data.svg === "string") pending.resolve(data.svg);
			else pending.reject(new Error(data.error ?? "the diagram could not be drawn"));
		});
		frame.onerror = () => reject(new Error("the diagram renderer could not be loaded"));
		document.body.append(frame);
	});
	renderer.catch(() => {
		renderer = undefined;
	});
	return renderer;
}

export function MermaidDiagram(props: { source: string }): ReactNode {
	const key = useId();
	const [url, setUrl] = useState<string | null>(null);
	const [failed, setFailed] = useState(false);
	const [expanded, setExpanded] = useState(false);

	useEffect(() => {
		let cancelled = false;
		let made: string | null = null;
		setFailed(false);
		loadRenderer()
			.then((r) => r.draw(props.source))
			.then((svg) => {
				if (cancelled) return;
				// Shown as an image, the SVG can neither run nor load anything, whatever it holds.
				made = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
				setUrl(made);
			})
			.catch(() => {
				if (!cancelled) setFailed(true);
			});
		return () => {
			cancelled = true;
			if (made) URL.revokeObjectURL(made);
		};
	}, [props.source]);

	const code = (
		<pre>
			<code>{props.source}</code>
		</pre>
	);
	if (failed || !url) {
		return (
			<figure className="diagram-source" data-diagram={failed ? "failed" : "loading"} data-key={key}>
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
