// The UI's lint: JavaScript's and TypeScript's recommended rules and React's hooks rules (the
// rules of hooks and exhaustive effect dependencies), run by `npm run lint` in
// `scripts/test.sh`, where a warning fails the check as an error does.
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
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      // `const { [key]: _, ...rest } = all` drops a key; the dropped value is meant to be unused.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
    languageOptions: {
      ecmaVersion: 2022,
      globals: globals.browser,
    },
  },
]);
