// jose, loaded with the first JWT signed or verified or key made, not when the app starts: most
// requests never touch a JWT (docs/architecture.md, "Lazy loading").
type Jose = typeof import('jose');

let loaded: Jose | null = null;

export async function jose(): Promise<Jose> {
  return (loaded ??= await import('jose'));
}
