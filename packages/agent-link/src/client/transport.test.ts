/** Reading the code of a refused upgrade's JSON body. */
import { expect, test } from "bun:test";
import { bodyCode } from "./transport";

test("a JSON body's code, or nothing", () => {
	expect(bodyCode('{"code":"subprotocol-required","supported":["chopin.agent.v1"]}')).toBe(
		"subprotocol-required",
	);
	expect(bodyCode("Unauthorized")).toBeUndefined();
	expect(bodyCode('{"code":7}')).toBeUndefined();
	expect(bodyCode(JSON.stringify({ code: "x".repeat(200) }))).toBeUndefined();
});
