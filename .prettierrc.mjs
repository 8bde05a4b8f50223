/**
 * Chosen to match the code as it was written before a formatter existed, so that formatting the
 * tree changes as little as possible: single quotes and trailing commas everywhere in code; 160
 * columns, because the code wraps by eye around 140-160 (at 160 formatting touches the fewest files
 * and lines: 132 files, ~2000 lines, against 185 files, ~3900 lines at 140). YAML keeps its double
 * quotes, as compose and the manifests write them.
 */
export default {
  printWidth: 160,
  singleQuote: true,
  trailingComma: 'all',
  semi: true,
  arrowParens: 'always',
  overrides: [{ files: ['*.yaml', '*.yml'], options: { singleQuote: false } }],
};
