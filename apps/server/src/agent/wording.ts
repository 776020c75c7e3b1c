// The exact sentences the agent connection and Chat say about a document's Planner, in one place so tests and docs quote them.

/** The chat handle of the Planner, as people write it and as its notices name it. */
export const PLANNER = "chopin";

export const wording = {
	/** planner-attached while another client holds the document (spec: Ownership). */
	plannerAttached: (login: string) =>
		`${login} is connected to this document. A document has one agent connected at a time.`,

	/** planner-attached while the holder's grace period runs. */
	plannerInGrace: (login: string, until: number) =>
		`${login} disconnected from this document and keeps it until ${new Date(until).toISOString()} unless they connect again. A document has one agent connected at a time.`,

	/** sign-in-required (4401) when the browser sign-in the ownership rests on ends. */
	signInEnded: (login: string, publicUrl: string) =>
		`The Chopin browser sign-in that connected ${login} to this document ended, so the connection was released. Sign in to Chopin at ${publicUrl} in a browser as ${login}, then connect again.`,

	/** sign-in-required at attach: no live browser sign-in of the account on this server. */
	signInRequired: (login: string, publicUrl: string) =>
		`${login} has no live Chopin browser sign-in on this server since it started. Sign in to Chopin at ${publicUrl} in a browser as ${login}, then connect again.`,

	/** access-revoked (4403) after a repository writer reset the document's Planner. */
	reset: (login: string) =>
		`A repository writer reset this document's connection, so ${login} is no longer connected. Connect again to resume.`,

	/** access-revoked (4403) when the ownership was released by anything else. */
	released: (login: string) =>
		`This document's connection was released, so ${login} is no longer connected. Connect again to resume.`,

	/** access-revoked (4403) when the machine whose credential attached the link was disconnected. */
	machineRevoked: (login: string) =>
		`${login}'s machine was disconnected from Chopin, so the connection was released. Connect the machine again to resume.`,

	/** access-revoked (4403) when GitHub no longer accepts the machine's authorization. */
	machineReauthorize: (login: string) =>
		`GitHub no longer accepts the authorization of ${login}'s machine, so the connection was released. Connect the machine again to resume.`,

	/** access-revoked (4403) when Chopin stopped asking the machine for the document (moved, unused, access lost). */
	machineWithdrawn: (login: string, reason: "moved" | "unused" | "access-lost" | "other") =>
		reason === "moved"
			? `This document's Planner moved to another machine, so ${login}'s machine is no longer connected to it.`
			: reason === "unused"
				? `This document was unused for 30 minutes, so Chopin stopped its Planner on ${login}'s machine. It starts again when someone asks it.`
				: reason === "access-lost"
					? `${login}'s machine lost push access to this document's repository, so the connection was released.`
					: `Chopin no longer asks ${login}'s machine to run this document's Planner, so the connection was released.`,

	/** planner-attached closing a machine's own earlier link when the same machine attaches again. */
	replacedBySameMachine: (login: string) =>
		`A newer connection from ${login}'s same machine took over this document, so this one was closed.`,

	/** access-revoked (4403) when a recheck finds admission or push access lost. */
	accessLost: (login: string, repository: string) =>
		`${login} no longer has push or administration access to ${repository}, or is no longer admitted to this Chopin server, so the connection was released.`,

	/** access-revoked (4403) when the document is archived or deleted while attached. */
	documentGone: (login: string, change: "archived" | "deleted") =>
		`This document was ${change}, so ${login} is no longer connected.`,

	repositoryForbidden: (login: string, repository: string) =>
		`${login} cannot push to or administer ${repository}, so it cannot be this document's Planner.`,

	machineForbidden: () => "This Planner credential was issued for another document.",

	documentUnavailable: (reference: string) =>
		`No document matches ${JSON.stringify(reference.slice(0, 200))}, or it is being deleted.`,

	documentArchived: (title: string) => `The document ${JSON.stringify(title)} is archived.`,

	unsupportedVersion: (version: number) =>
		`This server speaks chopin.agent.v1 (version 1), not version ${version}.`,

	unavailable: () =>
		"Chopin could not check the document or the account just now (GitHub may be unavailable). Try again later.",

	/** Chat: an @chopin message with no attached Planner and no machine starting one (HARNESS=remote without paired machines). */
	notAttached: (documentUrl: string, repository: string) =>
		`Connect a machine to get a reply. Connect an agent client to ${documentUrl} over the agent connection from a session in a checkout of ${repository}.`,

	/** Chat: no attached Planner and none starting, where Chopin runs Planners on paired machines. */
	connectMachine: () =>
		"Connect a machine to get a reply. Choose one with the machine button, or run `chopin connect` on a machine that can reply.",

	/** Chat: a paired machine is starting the Planner and it did not attach within the wait (30 s). */
	stillConnecting: (login: string) => `Still connecting to @${login}'s machine. Try again in a moment.`,

	/** Chat: the machine's backend exited before attaching more than once in a row. */
	cantConnect: (login: string, reason: string) =>
		`Can't connect to @${login}'s machine: ${reason}. Try again once that is fixed.`,

	/** planner-attached while the holder's resumable link is down with its work kept (spec: Ownership). */
	plannerDisconnected: (login: string) =>
		`${login} is connected to this document, and its connection dropped. Its work is kept until it reconnects. A document has one agent connected at a time.`,

	/** Chat: inside a restart's hand-over window, before the client has resumed (spec: Without an attached Planner). */
	stillConnectingHandover: (login: string) =>
		`Still connecting to @${login}'s machine, so this message wasn't sent. Send it again in a moment.`,

	/** Chat: the Planner is in its grace period (or disconnected). */
	machineOffline: (login: string) =>
		`@${login}'s machine is offline, so this message wasn't sent. Send it again when it's back.`,

	/** invoke_planner as: "system" from an account that does not hold the document's Planner. */
	systemForbidden: (holder: string) =>
		`Only @${holder}, who holds this document's Planner, can send it an automatic follow-up.`,

	/** Chat notices of an invoke_planner call: who asked (the request follows on its own lines). */
	invokeNotice: (asker: string) => `${asker} asked @${PLANNER}:`,
	followUpNotice: (about: string) => `An automatic follow-up from Chopin (${about}) for @${PLANNER}:`,

	/** invoke_planner when the Planner's turn did not end within the wait, or the caller went away. */
	invokeTimeout: () =>
		`${PLANNER} has not finished its reply within 10 minutes. It goes on in the document's Chat; read it there.`,
	invokeCancelled: () =>
		`The request ended before ${PLANNER} finished its reply; it goes on in the document's Chat.`,

	/** Chat: a message while the Planner works on a turn, without steer-turn. */
	busy: () => `${PLANNER} can't take messages while it works on this machine. Stop it to ask now.`,

	/** Chat: an @chopin message while the Planner is busy but has no running turn to steer (starting or stopping). */
	steerNoTurn: () =>
		`${PLANNER} can't take this message just now: its reply is starting or stopping. Send it again in a moment.`,

	/** A message with files while the Planner works (steer-turn): a steer carries words only (attachments). */
	steerAttachments: () =>
		`${PLANNER} can't take files while it works: a message sent meanwhile reaches its reply as words only. Send the files once it is done, or Stop it first.`,
	/** A command message with files: a command's turn carries its words only (attachments). */
	attachmentsWithCommand: () => "A command can't carry files. Send the files with an ordinary message.",

	/** Chat notices for a steered message (steer-turn) that was not read, or not confirmed in time. */
	steerRefused: (author: string, message?: string) =>
		`${PLANNER} did not read @${author}'s message${message ? `: ${message}` : "."}`,
	steerNotConfirmed: (author: string) =>
		`${PLANNER} has not confirmed that it read @${author}'s message, so it may not have.`,
	steerEnded: (author: string) => `${PLANNER} did not read @${author}'s message: its reply ended first.`,
	steerReadLate: (author: string) => `${PLANNER} confirmed that it read @${author}'s message.`,
	steerClosed: (author: string) =>
		`${PLANNER} may not have read @${author}'s message: the agent connection closed before it answered.`,

	/** Retry on a failed reply (retry-turn's Chat side). */
	retryNotFailed: () => "Only a failed reply can be retried.",
	retryNotPerson: () => "Only a reply to a person's message can be retried.",
	retryForbidden: (author: string) => `Only @${author}, who sent the message, can retry it.`,
	retryArchived: () => "This document is archived, so its Chat takes no new replies.",

	/** Chat notices for Stop and Resume Planner. */
	stopConfirmed: (by: string) => `${PLANNER} stopped, as @${by} asked.`,
	stopRefused: (by: string, message?: string) =>
		`${PLANNER} could not stop, as @${by} asked${message ? `: ${message}` : "."}`,
	stopNotConfirmed: (by: string) => `${PLANNER} has not confirmed that it stopped, as @${by} asked.`,
	stopConfirmedLate: () => `${PLANNER} confirmed that it stopped.`,
	resumeConfirmed: (by: string) => `${PLANNER} resumed its workflows, as @${by} asked.`,
	resumeRefused: (by: string, message?: string) =>
		`${PLANNER} could not resume its workflows, as @${by} asked${message ? `: ${message}` : "."}`,
	resumeNotConfirmed: (by: string) =>
		`${PLANNER} has not confirmed that it resumed its workflows, as @${by} asked.`,
	resumeConfirmedLate: () => `${PLANNER} confirmed that it resumed its workflows.`,
	/** Stop or Resume while a resumable link is down (spec: Resuming, "Stop is held, not lost"). */
	stopHeld: (by: string) =>
		`${PLANNER}'s machine is offline, so it was asked to stop, as @${by} asked: its workflows will pause when the machine reconnects.`,
	stopWithdrewQuestions: (by: string) =>
		`${PLANNER}'s questions were withdrawn, as @${by} asked: its machine is offline and it was only waiting on them.`,
	resumeNotHeld: (by: string) =>
		`${PLANNER}'s machine is offline, so its workflows could not be resumed, as @${by} asked. Resume them again once it is back.`,

	/** A host-tool-call for a turn or session that has ended (spec: Client to server, exact). */
	turnEndedForTool: () => "The turn has ended.",
	sessionEndedForTool: () => "The session has ended.",

	/** input-result failed (spec: Questions). */
	isolatedQuestion: () => "Questions are not available in an isolated session: it gets no Decisions.",
	tooManyQuestions: (max: number) =>
		`This connection already has ${max} open questions: wait for an answer, or cancel one with input-cancel.`,
	questionNotAsked: (reason: string) => `The question could not become a Decision: ${reason}`,

	/** A Chat reply's failure lines. */
	turnClosed: () => "The agent connection closed before chopin finished this reply.",
	turnAborted: () => "The reply was stopped.",
	turnFailed: () => "The reply failed.",
	startFailed: (message: string) => `${PLANNER} could not start a session: ${message}`,
	startTimedOut: () => `${PLANNER} did not start a session within 10 seconds.`,
	githubUnavailable: () =>
		"Chopin could not check access to the repository just now (GitHub is unavailable). Send the message again in a minute.",
} as const;
