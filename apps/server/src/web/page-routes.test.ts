import { expect, test } from "bun:test";
import { matchPage } from "./page-routes";

test("paths find their page and parameters; anything else finds none", () => {
	expect(matchPage("/")?.route.page).toBe("documents");
	expect(matchPage("/sign-in")?.route.page).toBe("sign-in");
	expect(matchPage("/d/abc")).toMatchObject({ route: { page: "document" }, params: { id: "abc" } });
	expect(matchPage("/d/")).toBeNull();
	expect(matchPage("/d/a/b")).toBeNull();
	expect(matchPage("/nope")).toBeNull();
	expect(matchPage("/d/%E0%A4%A")).toBeNull();
});
