// An option's preview (spec: Option previews): framed under its label and description as a group named
// "Preview of <label>"; a picture held to the column and a third of the screen opens large in a dialog from a
// click, which never chooses the option (the preview is outside the option's label).
import { type ReactNode, useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { Markdown } from "../markdown";

export function OptionPreview(props: {
	label: string;
	source: string;
	images: ReadonlySet<string>;
}): ReactNode {
	const [large, setLarge] = useState<{ src: string; alt: string } | null>(null);
	return (
		// The spec names the preview a group of its own; a fieldset would suggest form controls.
		// biome-ignore lint/a11y/useSemanticElements: see above.
		<div className="preview" role="group" aria-label={`Preview of ${props.label}`}>
			<Markdown source={props.source} images={props.images} breaks openImage={setLarge} />
			{large && <LargeImage {...large} onClose={() => setLarge(null)} />}
		</div>
	);
}

/**
 * The picture at full size in a modal dialog; Escape, Close or a click beside it closes it. Put on the body so
 * an answered card's disabled fieldset leaves its Close button working.
 */
function LargeImage(props: { src: string; alt: string; onClose(): void }): ReactNode {
	const dialog = useRef<HTMLDialogElement>(null);
	const close = useRef<HTMLButtonElement>(null);
	useEffect(() => {
		const element = dialog.current;
		if (!element || element.open) return;
		element.showModal();
		close.current?.focus();
	}, []);
	return createPortal(
		// A click on the backdrop lands on the dialog itself; Escape is the keyboard's way out.
		// biome-ignore lint/a11y/useKeyWithClickEvents: see above.
		<dialog
			ref={dialog}
			className="dialog image-dialog"
			aria-label={props.alt}
			onClose={() => props.onClose()}
			onClick={(event) => {
				if (event.target === dialog.current) dialog.current?.close();
			}}
		>
			<img src={props.src} alt={props.alt} />
			<div className="row dialog-actions">
				<button ref={close} type="button" onClick={() => dialog.current?.close()}>
					Close
				</button>
			</div>
		</dialog>,
		document.body,
	);
}
