import { describe, expect, test } from "bun:test";
import { renderToStaticMarkup } from "react-dom/server";
import {
	decodeEntities,
	InlineMarkdown,
	linkDefinitions,
	Markdown,
	safeHref,
	splitCardText,
} from "./markdown";

const OWN = `/images/${"a".repeat(64)}.png`;
const OTHER = `/images/${"b".repeat(64)}.png`;
const html = (source: string, options: { breaks?: boolean } = {}) =>
	renderToStaticMarkup(<Markdown source={source} images={new Set([OWN])} {...options} />);

describe("Markdown, rendered safely", () => {
	test("raw HTML shows as the text it is, block and inline", () => {
		const out = html('<script>alert(1)</script>\n\nHi <img src=x onerror="alert(1)"> there');
		expect(out).not.toContain("<script");
		expect(out).not.toContain("<img");
		expect(out).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
		expect(out).toContain("Hi &lt;img src=x onerror=&quot;alert(1)&quot;&gt; there");
	});

	test("links only to http(s), mailto and relative targets", () => {
		expect(html("[a](https://example.com)")).toContain(
			'<a href="https://example.com" rel="noopener noreferrer" target="_blank">a</a>',
		);
		expect(html("[a](mailto:x@example.com)")).toContain('href="mailto:x@example.com"');
		expect(html("[a](/d/abc)")).toContain('<a href="/d/abc">a</a>');
		for (const bad of [
			"javascript:alert(1)",
			"JaVaScRiPt:alert(1)",
			"javascript&#58;alert(1)",
			"data:text/html,x",
			"vbscript:x",
		]) {
			const out = html(`[click](${bad})`);
			expect(out).not.toContain("<a");
			expect(out).toContain("<span>click</span>");
		}
		expect(safeHref("java\tscript:alert(1)")).toBeNull();
		expect(safeHref("\u0000javascript:alert(1)")).toBeNull();
		expect(safeHref(" https://x.example")).toBe("https://x.example");
		expect(safeHref("ftp://x")).toBeNull();
	});

	test("only the document's own images show; others, and images without alt text, show their words", () => {
		expect(html(`![A chart](${OWN})`)).toContain(`<img src="${OWN}" alt="A chart" loading="lazy"/>`);
		expect(html(`![Theirs](${OTHER})`)).toContain('<span class="image-alt">[Theirs]</span>');
		expect(html("![Remote](https://example.com/x.png)")).toContain("[Remote]");
		expect(html("![Inline](data:image/png;base64,AAAA)")).not.toContain("<img");
		expect(html(`![](${OWN})`)).toContain("[image without alternative text]");
	});

	test("with openImage, each own image is a link to itself; one inside a link stays that link's", () => {
		const open = () => {};
		const out = (source: string) =>
			renderToStaticMarkup(<Markdown source={source} images={new Set([OWN])} openImage={open} />);
		expect(out(`![Grid](${OWN})`)).toBe(
			`<p><a class="image-open" href="${OWN}"><img src="${OWN}" alt="Grid" loading="lazy"/></a></p>`,
		);
		expect(out(`[![Grid](${OWN})](https://example.com)`)).toBe(
			`<p><a href="https://example.com" rel="noopener noreferrer" target="_blank"><img src="${OWN}" alt="Grid" loading="lazy"/></a></p>`,
		);
		// An image that is not the document's own is still its words, with nothing to open.
		expect(out(`![Remote](https://example.com/x.png)`)).toBe(
			'<p><span class="image-alt">[Remote]</span></p>',
		);
	});

	test("GFM: headings, lists with tasks, quotes, code, tables; entities decoded once", () => {
		const out = html(
			"# T\n\n- [x] done\n- two\n\n> quoted\n\n```ts\nlet a = 1 < 2;\n```\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\nAT&amp;T &lt;b&gt;",
		);
		expect(out).toContain("<h1>T</h1>");
		expect(out).toContain('<input type="checkbox" disabled="" aria-label="task" checked=""/>');
		expect(out).toContain("<blockquote><p>quoted</p></blockquote>");
		expect(out).toContain("<pre><code>let a = 1 &lt; 2;</code></pre>");
		expect(out).toContain('<td align="right">2</td>');
		expect(out).toContain("<p>AT&amp;T &lt;b&gt;</p>");
		expect(decodeEntities("&#x1F600; &#0; &bogus;")).toBe("😀 \ufffd &bogus;");
	});

	test("a mermaid fence shows its source until the diagram is drawn", () => {
		const out = html("```mermaid\ngraph TD; A-->B\n```");
		expect(out).toContain('data-diagram="loading"');
		expect(out).toContain("graph TD; A--&gt;B");
	});

	test("line breaks are line breaks in Chat and card text", () => {
		expect(html("one\ntwo", { breaks: true })).toBe("<p>one<br/>two</p>");
		expect(html("one\ntwo")).toBe("<p>one\ntwo</p>");
	});

	test("a block rendered alone still resolves the document's reference links", () => {
		const source = "See [the spec][s].\n\n[s]: https://example.com/spec\n";
		const out = renderToStaticMarkup(
			<Markdown source="See [the spec][s]." links={linkDefinitions(source)} />,
		);
		expect(out).toContain('href="https://example.com/spec"');
	});
});

describe("card text", () => {
	test("the first line is the heading, inline only; the rest is the body", () => {
		expect(splitCardText("Confirm\n\n- a\n- b")).toEqual({ heading: "Confirm", body: "\n- a\n- b" });
		expect(splitCardText("One line")).toEqual({ heading: "One line", body: "" });
		expect(splitCardText("Head\r\nBody")).toEqual({ heading: "Head", body: "Body" });
		const heading = renderToStaticMarkup(<InlineMarkdown text="1. Ship *it* with `code` <b>?</b>" />);
		expect(heading).toBe("1. Ship <em>it</em> with <code>code</code> &lt;b&gt;?&lt;/b&gt;");
		expect(renderToStaticMarkup(<InlineMarkdown text="# Not a heading" />)).toBe("# Not a heading");
	});
});
