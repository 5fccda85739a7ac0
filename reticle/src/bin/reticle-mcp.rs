//! The `reticle-mcp` binary: the MCP proxy's processes alone (see [`reticle::proxy::executable`]),
//! so an agent's proxy maps only the proxy's code.

fn main() -> std::process::ExitCode {
    reticle::proxy::executable::main()
}
