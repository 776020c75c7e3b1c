// The emulator's HTTP control API under /_emulator/, so the standalone emulator (and a test in
// another process) can change GitHub at run time, inject faults and read the request log.
import { z } from "zod";
import type { GitHubEmulator } from "./github-emulator";
import { EmulatorError, type EmulatorErrorCode } from "./github-emulator-errors";
import { faultSchema } from "./github-faults";
import { addTokenSchema, loginSchema, roleSchema, userSchema } from "./github-fixture";

const STATUS: Record<EmulatorErrorCode, number> = {
	"fixture-unreadable": 400,
	"fixture-invalid": 400,
	"invalid-control-request": 400,
	"unknown-user": 404,
	"unknown-repository": 404,
	"unknown-token": 404,
	"unknown-control-endpoint": 404,
	"duplicate-user": 409,
	"unexpected-calls": 409,
};

const tokenBody = z.strictObject({ token: z.string().min(1) });
const roleBody = z.strictObject({ role: roleSchema });
const revokeAuthorizationBody = z.strictObject({
	login: loginSchema,
	clientId: z.string().min(1).optional(),
});

async function readJson(req: Request): Promise<unknown> {
	try {
		return await req.json();
	} catch {
		throw new EmulatorError("invalid-control-request", "The request body is not JSON.", "Send a JSON body.");
	}
}

async function body<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
	const parsed = schema.safeParse(await readJson(req));
	if (!parsed.success) {
		throw new EmulatorError(
			"invalid-control-request",
			`The request body is not valid: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}.`,
			"See docs/github-emulator.md for the control API.",
		);
	}
	return parsed.data;
}

const noContent = () => new Response(null, { status: 204 });

async function route(emulator: GitHubEmulator, req: Request, path: string): Promise<Response> {
	const method = req.method;
	const permission = /^\/repos\/([^/]+)\/([^/]+)\/permissions\/([^/]+)$/.exec(path);
	if (permission) {
		const [, owner = "", repo = "", login = ""] = permission.map((p) => decodeURIComponent(p));
		if (method === "PUT") {
			emulator.setPermission(`${owner}/${repo}`, login, (await body(req, roleBody)).role);
			return noContent();
		}
		if (method === "DELETE") {
			emulator.removePermission(`${owner}/${repo}`, login);
			return noContent();
		}
	}
	const member = /^\/orgs\/([^/]+)\/members\/([^/]+)$/.exec(path);
	if (member && method === "DELETE") {
		const [, org = "", login = ""] = member.map((p) => decodeURIComponent(p));
		emulator.leaveOrganization(login, org);
		return noContent();
	}
	const rateLimit = /^\/rate-limit\/([^/]+)$/.exec(path);
	if (rateLimit && method === "GET")
		return Response.json(emulator.rateLimit(decodeURIComponent(rateLimit[1]!)));
	switch (`${method} ${path}`) {
		case "GET ":
		case "GET /":
			return Response.json({ url: emulator.url, apiUrl: emulator.apiUrl });
		case "GET /requests": {
			const onlyUnexpected = new URL(req.url).searchParams.get("unexpected") === "1";
			return Response.json({ requests: onlyUnexpected ? emulator.unexpected() : emulator.requests() });
		}
		case "DELETE /requests":
			emulator.clearRequests();
			return noContent();
		case "POST /verify":
			emulator.verify();
			return noContent();
		case "POST /users": {
			const user = emulator.addUser(await body(req, userSchema));
			return Response.json({ login: user.login, id: user.id }, { status: 201 });
		}
		case "POST /tokens":
			return Response.json({ token: emulator.addToken(await body(req, addTokenSchema)) }, { status: 201 });
		case "POST /tokens/revoke":
			emulator.revokeToken((await body(req, tokenBody)).token);
			return noContent();
		case "POST /tokens/expire":
			emulator.expireToken((await body(req, tokenBody)).token);
			return noContent();
		case "POST /authorizations/revoke": {
			const { login, clientId } = await body(req, revokeAuthorizationBody);
			emulator.revokeAuthorization(login, clientId);
			return noContent();
		}
		case "POST /faults":
			emulator.inject(await body(req, faultSchema));
			return new Response(null, { status: 201 });
		case "DELETE /faults":
			emulator.clearFaults();
			return noContent();
		case "POST /held/release":
			emulator.releaseHeld();
			return noContent();
	}
	throw new EmulatorError(
		"unknown-control-endpoint",
		`The control API has no ${method} /_emulator${path}.`,
		"See docs/github-emulator.md for the control API.",
	);
}

/** Runs a control request; errors answer `{ code, message, hint }` with a status that fits the code. */
export async function controlResponse(
	emulator: GitHubEmulator,
	req: Request,
	path: string,
): Promise<Response> {
	try {
		return await route(emulator, req, path);
	} catch (err) {
		if (!(err instanceof EmulatorError)) throw err;
		return Response.json(
			{ ...err.toJSON(), ...(err.details.length > 0 ? { details: err.details } : {}) },
			{ status: STATUS[err.code] },
		);
	}
}
