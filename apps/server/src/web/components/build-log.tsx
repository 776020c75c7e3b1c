// A run's log on its card: the last lines, live, kept scrolled to the end while the reader is there; older lines a
// page at a time on demand; lines missed while the socket was away fetched once the page knows of them. Text only.
import { type ReactNode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { api, type BuildView, describeError, type LogPage } from "../api";
import { type BuildLog as HeldLog, logBehind, type mergeLog } from "../document-state";

/** Lines a log shows first, and lines a page of "Show older lines" adds. */
export const LOG_TAIL = 200;
export const LOG_OLDER_PAGE = 500;

type MergeOptions = NonNullable<Parameters<typeof mergeLog>[2]>;

export function BuildLog(props: {
	build: BuildView;
	log: HeldLog | undefined;
	onLines(lines: LogPage["lines"], options: MergeOptions): void;
}): ReactNode {
	const { build, log, onLines } = props;
	const [open, setOpen] = useState(build.live);
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState<string | null>(null);
	const box = useRef<HTMLOListElement>(null);
	/** Whether the reader is at the end: new lines keep it there; scrolled up, it stays put. */
	const atEnd = useRef(true);
	/** The distance from the bottom before older lines were put in front, to keep the reader's place. */
	const fromBottom = useRef<number | null>(null);
	const fetching = useRef(false);
	// The latest callback, so a card's re-render (a new function each time) does not fetch again.
	const linesTo = useRef(onLines);
	linesTo.current = onLines;

	const read = useCallback(
		(after: number, limit: number) =>
			api<LogPage>(
				"GET",
				`/api/builds/${encodeURIComponent(build.id)}/log?${new URLSearchParams({ after: String(after), limit: String(limit) })}`,
			),
		[build.id],
	);

	const heldLast = log?.lines.at(-1)?.seq ?? 0;
	const needed = open && (!log?.loaded || logBehind(build, log));
	const lastSeq = build.log.lastSeq;
	const loaded = log?.loaded ?? false;

	// The tail when first opened; after that, whatever the page learns it missed (from where it is, or the tail).
	useEffect(() => {
		if (!needed || fetching.current) return;
		const last = Math.max(lastSeq, heldLast);
		if (last === 0) {
			linesTo.current([], { loaded: true, older: false });
			return;
		}
		fetching.current = true;
		const from = loaded ? heldLast : 0;
		const after = Math.max(from, last - LOG_TAIL);
		read(after, Math.max(1, last - after))
			.then((page) => {
				fetching.current = false;
				const options: MergeOptions = { loaded: true };
				if (after > from) {
					// Lines up to `after` are not fetched: those held are dropped so the log stays contiguous.
					options.dropThrough = after;
					options.older = page.lines[0]?.seq === after + 1;
				} else if (!loaded) {
					// Read from the oldest line the server keeps: nothing older remains.
					options.older = false;
				}
				linesTo.current(page.lines, options);
				setError(null);
			})
			.catch((e: unknown) => {
				fetching.current = false;
				setError(describeError(e));
			});
	}, [needed, lastSeq, heldLast, loaded, read]);

	const showOlder = async () => {
		const first = log?.lines[0]?.seq;
		if (first === undefined || busy) return;
		setBusy(true);
		try {
			const after = Math.max(0, first - 1 - LOG_OLDER_PAGE);
			const page = await read(after, Math.max(1, first - 1 - after));
			const element = box.current;
			if (element) fromBottom.current = element.scrollHeight - element.scrollTop;
			linesTo.current(
				page.lines.filter((l) => l.seq < first),
				{ older: after > 0 && page.lines[0]?.seq === after + 1 },
			);
			setError(null);
		} catch (e) {
			setError(describeError(e));
		} finally {
			setBusy(false);
		}
	};

	const firstSeq = log?.lines[0]?.seq;
	// biome-ignore lint/correctness/useExhaustiveDependencies: new lines, older lines or opening are the reasons to scroll.
	useLayoutEffect(() => {
		const element = box.current;
		if (!element) return;
		if (fromBottom.current !== null) {
			element.scrollTop = element.scrollHeight - fromBottom.current;
			fromBottom.current = null;
		} else if (atEnd.current) {
			element.scrollTop = element.scrollHeight;
		}
	}, [heldLast, firstSeq, open]);

	const lines = log?.lines ?? [];
	const count = build.log.lastSeq;
	return (
		<details className="build-log" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
			<summary>
				Log ({count} {count === 1 ? "line" : "lines"})
			</summary>
			{log?.older && (
				<button type="button" className="link-button" disabled={busy} onClick={showOlder}>
					Show older lines
				</button>
			)}
			{open && lines.length === 0 && (
				<p className="muted">{count === 0 ? "No log lines yet." : "Loading the log…"}</p>
			)}
			{lines.length > 0 && (
				<ol
					ref={box}
					className="log-lines"
					aria-label="Log lines"
					// biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
					tabIndex={0}
					onScroll={(e) => {
						const el = e.currentTarget;
						atEnd.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
					}}
				>
					{lines.map((line) => (
						<li key={line.seq} data-seq={line.seq} data-kind={line.kind}>
							<span className="log-kind">{line.kind}</span> <span className="log-text">{line.text}</span>
						</li>
					))}
				</ol>
			)}
			{error && <p role="alert">{error}</p>}
		</details>
	);
}
