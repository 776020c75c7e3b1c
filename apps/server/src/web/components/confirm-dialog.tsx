// A confirmation for an action that cannot be undone, as a real modal <dialog>: the browser keeps focus inside it,
// Escape cancels, and focus starts on Cancel so Enter alone never does the harm.
import { type ReactNode, useEffect, useId, useRef } from "react";

export function ConfirmDialog(props: {
	open: boolean;
	title: string;
	children: ReactNode;
	/** The button that does it, e.g. "Disconnect ana's laptop". */
	confirmLabel: string;
	busy?: boolean;
	error?: string | null;
	onConfirm(): void;
	/** Cancel, Escape, or the dialog closing any other way. */
	onClose(): void;
}): ReactNode {
	const dialog = useRef<HTMLDialogElement>(null);
	const cancel = useRef<HTMLButtonElement>(null);
	const titleId = useId();
	const bodyId = useId();

	useEffect(() => {
		const element = dialog.current;
		if (!element) return;
		if (props.open && !element.open) {
			element.showModal();
			cancel.current?.focus();
		}
		if (!props.open && element.open) element.close();
	}, [props.open]);

	return (
		<dialog
			ref={dialog}
			className="dialog"
			aria-labelledby={titleId}
			aria-describedby={bodyId}
			onClose={() => props.onClose()}
		>
			<h2 id={titleId}>{props.title}</h2>
			<div id={bodyId}>{props.children}</div>
			{props.error && <p role="alert">{props.error}</p>}
			<div className="row dialog-actions">
				<button ref={cancel} type="button" onClick={() => props.onClose()}>
					Cancel
				</button>
				<button type="button" className="danger" disabled={props.busy} onClick={() => props.onConfirm()}>
					{props.confirmLabel}
				</button>
			</div>
		</dialog>
	);
}
