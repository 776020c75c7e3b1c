/**
 * Every size limit of chopin.agent.v1 in one place, named after the spec's tables and fields.
 * Lengths are in code points ("characters"); the frame limit is in UTF-8 bytes.
 */

/** One message is one text frame of at most 2 MiB of UTF-8. */
export const MAX_FRAME_BYTES = 2_097_152;

/** Shared limits (spec: Frames). `text` fields have no limit of their own: the frame bounds them. */
export const ID_MAX = 128;
export const NAME_MAX = 128;
export const SHORT_MAX = 128;
export const NOTE_MAX = 4000;

/** attach */
export const DOCUMENT_MAX = 2048;
export const CHECKOUT_ORIGIN_MAX = 2048;
export const CHECKOUT_BRANCH_MAX = 256;
export const CHECKOUT_HEAD_MAX = 128;

/** attached */
export const REPOSITORY_MAX = 257;
export const URL_MAX = 2048;
export const FEATURES_MAX = 16;
/** A feature name, and the identifier shape a structured tool error's code and kind share. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** turn and tools */
export const TOOLS_MAX = 256;
export const TOOL_DESCRIPTION_MAX = 64_000;

/** Questions */
export const QUESTIONS_MAX = 16;
export const OPTIONS_MAX = 32;
export const PREVIEW_MAX = 16_000;
export const CHOICES_MAX = 32;

/** Run cards */
export const CARDS_MAX = 64;
/** Stages on a full card; a delta card's stages are bounded by the frame alone. */
export const STAGES_MAX = 64;
export const PARENT_IDS_MAX = 64;
/** Entries of runs.active and runs.paused. */
export const RUN_IDS_MAX = 64;

/** Images and files in a turn */
export const ATTACHMENTS_MAX = 20;
/** Decoded bytes of all of a turn's attachments together. */
export const ATTACHMENTS_TOTAL_BYTES = 1_048_576;
export const ATTACHMENT_NAME_MAX = 255;

/** Structured tool errors: message is 1 to 4000 characters. */
export const TOOL_ERROR_MESSAGE_MAX = 4000;

/** Server-side rules the schemas cannot see, stated here so both ends share the numbers. */
export const OPEN_REQUESTS_MAX = 16;
export const REMEMBERED_REQUEST_IDS = 1024;

/** upload_plan_image (decision-option-previews): alt is one line of at most 200 characters. */
export const UPLOAD_PLAN_IMAGE_ALT_MAX = 200;
/** upload_plan_image data: at most 16 MiB decoded. */
export const UPLOAD_PLAN_IMAGE_MAX_BYTES = 16 * 1024 * 1024;
/** read_plan and read_child results carry at most 16,000 UTF-8 bytes in all. */
export const READ_RESULT_MAX_BYTES = 16_000;
