// Types of esbuild-bundle.mjs (plain JavaScript so that bin/attestorm.js can load it without a loader).
export declare const NATIVE_EXTERNAL: string[];
export declare const CLI_EXTERNAL: string[];
export declare function newestSourceMtime(dir: string): number;
export declare function bundleOnce(opts: {
  entry: string;
  out: string;
  prefix: string;
  external: string[];
  minify?: boolean;
  format?: 'esm' | 'cjs';
}): Promise<string>;
