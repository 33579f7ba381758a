// The UI's lint: JavaScript's and TypeScript's recommended rules and React's hooks rules, the
// React Compiler's included (refs read during render, purity, variables used before they are
// declared, memoization the compiler could not keep), run by `npm run lint` in
// `scripts/test.sh`, where a warning fails the check as an error does. Two of the compiler's
// rules are off, each for a stated reason:
// - `set-state-in-effect` flags 13 effects that fetch when a prop changes and reset their state
//   first (a conversation's runs, the search results, the find bar's hits). Each wants its own
//   rewrite (state keyed by what it was read for, so a stale value is never shown), not a
//   mechanical one; until then they stay as they are, tested by the component and end-to-end
//   tests.
// - `incompatible-library` only says the compiler would skip the message list, because TanStack
//   Virtual's `useVirtualizer` returns functions it cannot memoize. The window is not compiled
//   by the compiler, and the list is already memoized by hand.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import { defineConfig, globalIgnores } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig([
  // The bindings are generated from the Rust commands.
  globalIgnores(["dist", "src/bindings.ts"]),
  {
    files: ["**/*.{ts,tsx}"],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...Object.fromEntries(Object.keys(reactHooks.configs["recommended-latest"].rules).map((rule) => [rule, "error"])),
      "react-hooks/set-state-in-effect": "off",
      "react-hooks/incompatible-library": "off",
      // `const { [key]: _, ...rest } = all` drops a key; the dropped value is meant to be unused.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
    languageOptions: {
      ecmaVersion: 2022,
      globals: globals.browser,
    },
  },
]);
