// The diagram renderer's frame (/_chopin/mermaid-frame): a page of its own, in a sandbox with no origin,
// that draws Mermaid source for the document page and posts the SVG back. mermaid measures text with
// inline styles, which the frame's policy allows and the pages' policy does not. Plain JS, served as is.

window.mermaid.initialize({
	startOnLoad: false,
	securityLevel: "strict",
	theme: "default",
	// Plain SVG text rather than HTML labels: the page shows the diagram as an image, and a label's HTML
	// stays its text instead of becoming markup in this frame.
	htmlLabels: false,
	flowchart: { htmlLabels: false },
	// Keys a diagram may not change through an init directive or front matter config (mermaid strips them
	// at every level): its own secure list, and htmlLabels, which would turn label HTML back into markup.
	secure: [
		"secure",
		"securityLevel",
		"startOnLoad",
		"maxTextSize",
		"suppressErrorRendering",
		"maxEdges",
		"htmlLabels",
	],
	// Source it cannot draw throws, and the page shows it as code.
	suppressErrorRendering: true,
});

/**
 * The SVG at its own size: mermaid makes it 100% wide (with a max-width style), which as an image would
 * blow a small diagram up to the page's column. Its viewBox says how large it is.
 */
function naturalSize(svg) {
	const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
	const root = doc.documentElement;
	if (root.nodeName !== "svg" || doc.getElementsByTagName("parsererror").length)
		throw new Error("not an SVG");
	const box = (root.getAttribute("viewBox") || "")
		.trim()
		.split(/[\s,]+/)
		.map(Number);
	if (box.length === 4 && box.every((n) => Number.isFinite(n))) {
		root.setAttribute("width", String(Math.ceil(box[2])));
		root.setAttribute("height", String(Math.ceil(box[3])));
		root.removeAttribute("style");
	}
	return new XMLSerializer().serializeToString(root);
}

let queue = Promise.resolve();
let seq = 0;

window.addEventListener("message", (event) => {
	// Only the page that holds this frame asks it to draw.
	if (event.source !== window.parent) return;
	const request = event.data;
	if (!request || typeof request.id !== "string" || typeof request.source !== "string") return;
	seq += 1;
	const renderId = `diagram-${seq}`;
	// One diagram at a time: mermaid keeps global state while it draws.
	queue = queue.then(async () => {
		try {
			const { svg } = await window.mermaid.render(renderId, request.source);
			window.parent.postMessage({ id: request.id, svg: naturalSize(svg) }, "*");
		} catch (error) {
			window.parent.postMessage({ id: request.id, error: String(error?.message || error) }, "*");
		}
	});
});

window.parent.postMessage({ ready: true }, "*");
