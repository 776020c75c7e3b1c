/** The shape resume and resumed share (resumable-sessions): sessions with the request ids still waited on. */
import { z } from "zod";
import { idString } from "./fields";

export const resumeSessionSchema = z.strictObject({
	session: idString,
	requests: z.array(idString),
});
export type ResumeSession = z.infer<typeof resumeSessionSchema>;
