// Markdown shown safely: marked's tokens (the lexer Chopin's blocks and mentions use) turned into React
// elements, never into HTML. Raw HTML shows as the text it is; links only http(s), mailto and relative;
// images only the document's own /images/<sha256>.<ext> (others show their alt text); mermaid drawn as an image.
import { Lexer, type Links, type Token, type Tokens } from "marked";
import { Fragment, type ReactNode } from "react";
import { MermaidDiagram } from "./mermaid";

export interface MarkdownOptions {
	/** The document's own image paths: the only images shown. */
	images?: ReadonlySet<string>;
	/** A single line break is a line break (Chat and card text); documents follow GFM. */
	breaks?: boolean;
	/** Reference-style link definitions from the whole document, when rendering one block of it. */
	links?: Links;
	/** Makes each shown image a link to itself that calls this instead (an option preview opens it large). */
	openImage?(image: { src: string; alt: string }): void;
}

const NAMED: Record<string, string> = {
	amp: "&",
	lt: "<",
	gt: ">",
	quot: '"',
	apos: "'",
	nbsp: "\u00a0",
	copy: "©",
	reg: "®",
	hellip: "…",
	mdash: "—",
	ndash: "–",
	lsquo: "‘",
	rsquo: "’",
	ldquo: "“",
	rdquo: "”",
	middot: "·",
	times: "×",
};

/** Decodes the HTML character references marked leaves in text (React escapes what it renders). */
export function decodeEntities(text: string): string {
	return text.replace(/&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]{2,8});/g, (whole, ref: string) => {
		if (ref[0] !== "#") return NAMED[ref] ?? whole;
		const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
		return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
			? String.fromCodePoint(code)
			: "\ufffd";
	});
}

/** A link target a page may follow: http(s), mailto, or relative to this origin; null for anything else. */
export function safeHref(raw: string): string | null {
	// Browsers drop tabs, line breaks and leading spaces before reading a scheme; so do we, before checking it.
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
	const href = decodeEntities(raw).replace(/[\u0000-\u0020\u007f]/g, "");
	if (!href) return null;
	const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(href)?.[1]?.toLowerCase();
	if (scheme === undefined) return href;
	return scheme === "http" || scheme === "https" || scheme === "mailto" ? href : null;
}

const IMAGE_PATH = /^\/images\/[0-9a-f]{64}\.[a-z]+$/;

class Renderer {
	#key = 0;
	constructor(readonly options: MarkdownOptions) {}

	key(): number {
		this.#key += 1;
		return this.#key;
	}

	blocks(tokens: readonly Token[]): ReactNode[] {
		return tokens.map((token) => this.block(token));
	}

	inline(tokens: readonly Token[] | undefined): ReactNode[] {
		return (tokens ?? []).map((token) => this.inlineToken(token));
	}

	block(token: Token): ReactNode {
		const key = this.key();
		switch (token.type) {
			case "space":
			case "def":
				return null;
			case "heading": {
				const t = token as Tokens.Heading;
				const Tag = `h${Math.min(6, Math.max(1, t.depth))}` as "h1";
				return <Tag key={key}>{this.inline(t.tokens)}</Tag>;
			}
			case "paragraph":
				return <p key={key}>{this.inline((token as Tokens.Paragraph).tokens)}</p>;
			case "text": {
				// Text directly in a tight list item.
				const t = token as Tokens.Text;
				return <Fragment key={key}>{t.tokens ? this.inline(t.tokens) : decodeEntities(t.text)}</Fragment>;
			}
			case "code":
				return this.code(token as Tokens.Code, key);
			case "blockquote":
				return <blockquote key={key}>{this.blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
			case "list":
				return this.list(token as Tokens.List, key);
			case "table":
				return this.table(token as Tokens.Table, key);
			case "hr":
				return <hr key={key} />;
			case "html":
				// Raw HTML is shown as the text it is, never rendered.
				return (
					<pre key={key} className="raw-html">
						{(token as Tokens.HTML).raw.replace(/\n+$/, "")}
					</pre>
				);
			default:
				return <Fragment key={key}>{this.inlineToken(token)}</Fragment>;
		}
	}

	code(token: Tokens.Code, key: number): ReactNode {
		const lang = (token.lang ?? "").trim().split(/\s/)[0] ?? "";
		const code = (
			<pre>
				<code>{token.text}</code>
			</pre>
		);
		if (lang.toLowerCase() !== "mermaid") return <Fragment key={key}>{code}</Fragment>;
		return <MermaidDiagram key={key} source={token.text} />;
	}

	list(token: Tokens.List, key: number): ReactNode {
		const items = token.items.map((item) => (
			<li key={this.key()} className={item.task ? "task" : undefined}>
				{this.blocks(item.tokens)}
			</li>
		));
		if (!token.ordered) return <ul key={key}>{items}</ul>;
		const start = Number(token.start);
		return (
			<ol key={key} start={Number.isInteger(start) && start !== 1 ? start : undefined}>
				{items}
			</ol>
		);
	}

	table(token: Tokens.Table, key: number): ReactNode {
		const align = (i: number) => token.align[i] ?? undefined;
		return (
			<div key={key} className="table-scroll">
				<table>
					<thead>
						<tr>
							{token.header.map((cell, i) => (
								<th key={this.key()} align={align(i) ?? undefined}>
									{this.inline(cell.tokens)}
								</th>
							))}
						</tr>
					</thead>
					<tbody>
						{token.rows.map((row) => (
							<tr key={this.key()}>
								{row.map((cell, i) => (
									<td key={this.key()} align={align(i) ?? undefined}>
										{this.inline(cell.tokens)}
									</td>
								))}
							</tr>
						))}
					</tbody>
				</table>
			</div>
		);
	}

	inlineToken(token: Token): ReactNode {
		const key = this.key();
		switch (token.type) {
			case "text": {
				const t = token as Tokens.Text;
				if (t.tokens) return <Fragment key={key}>{this.inline(t.tokens)}</Fragment>;
				return <Fragment key={key}>{decodeEntities(t.text)}</Fragment>;
			}
			case "escape":
				return <Fragment key={key}>{(token as Tokens.Escape).text}</Fragment>;
			case "strong":
				return <strong key={key}>{this.inline((token as Tokens.Strong).tokens)}</strong>;
			case "em":
				return <em key={key}>{this.inline((token as Tokens.Em).tokens)}</em>;
			case "del":
				return <del key={key}>{this.inline((token as Tokens.Del).tokens)}</del>;
			case "codespan":
				return <code key={key}>{(token as Tokens.Codespan).text}</code>;
			case "br":
				return <br key={key} />;
			case "checkbox":
				return (
					<input
						key={key}
						type="checkbox"
						disabled
						checked={(token as Tokens.Checkbox).checked}
						aria-label="task"
					/>
				);
			case "link": {
				const t = token as Tokens.Link;
				const href = safeHref(t.href);
				// An image inside a link is that link's: it never becomes a link of its own inside it.
				const text = new Renderer({ ...this.options, openImage: undefined }).inline(t.tokens);
				if (href === null) return <span key={key}>{text}</span>;
				const external = /^(https?:)?\/\//i.test(href);
				return (
					<a
						key={key}
						href={href}
						title={t.title ?? undefined}
						rel={external ? "noopener noreferrer" : undefined}
						target={external ? "_blank" : undefined}
					>
						{text}
					</a>
				);
			}
			case "image": {
				const t = token as Tokens.Image;
				const alt = decodeEntities(t.text);
				const own = IMAGE_PATH.test(t.href) && this.options.images?.has(t.href);
				// Alternative text is required; an image that is not the document's own shows it instead.
				if (!own || !alt.trim()) {
					return (
						<span key={key} className="image-alt">
							{alt.trim() ? `[${alt}]` : "[image without alternative text]"}
						</span>
					);
				}
				const img = <img key={key} src={t.href} alt={alt} title={t.title ?? undefined} loading="lazy" />;
				const open = this.options.openImage;
				if (!open) return img;
				// A link, not a button: a disabled fieldset (an answered card) leaves it working.
				return (
					<a
						key={key}
						className="image-open"
						href={t.href}
						onClick={(event) => {
							event.preventDefault();
							open({ src: t.href, alt });
						}}
					>
						{img}
					</a>
				);
			}
			case "html":
				return <Fragment key={key}>{(token as Tokens.Tag).raw}</Fragment>;
			default:
				return <Fragment key={key}>{"raw" in token ? String(token.raw) : ""}</Fragment>;
		}
	}
}

function lexer(options: MarkdownOptions): Lexer {
	const lex = new Lexer({ gfm: true, breaks: options.breaks ?? false });
	if (options.links) Object.assign(lex.tokens.links, options.links);
	return lex;
}

/** Block Markdown (paragraphs, lists, quotes, code, tables, links, images) as React elements. */
export function Markdown(props: { source: string } & MarkdownOptions): ReactNode {
	const { source, ...options } = props;
	const tokens = lexer(options).lex(source);
	return <>{new Renderer(options).blocks(tokens)}</>;
}

/** Inline Markdown only: code spans, emphasis, links. A line that looks like a list or heading stays text. */
export function InlineMarkdown(props: { text: string } & MarkdownOptions): ReactNode {
	const { text, ...options } = props;
	const tokens = lexer(options).inlineTokens(text);
	return <>{new Renderer(options).inline(tokens)}</>;
}

/** The reference-style link definitions of a whole source. */
export function linkDefinitions(source: string): Links {
	return lexer({}).lex(source).links;
}

/** Card text (spec: Card text): the first line is the heading, inline only; the rest is the body. */
export function splitCardText(text: string): { heading: string; body: string } {
	const at = text.search(/\r\n|\r|\n/);
	if (at < 0) return { heading: text, body: "" };
	const breakLength = text.startsWith("\r\n", at) ? 2 : 1;
	return { heading: text.slice(0, at), body: text.slice(at + breakLength) };
}
