//! The `rea` command line: `rea serve` runs the stdio MCP server.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rea::mcp::{Server, ServerConfig, ShellConfig};

/// REA: guided prompts and verified completion for evidence-driven reverse engineering.
#[derive(Debug, Parser)]
#[command(name = "rea", version, about)]
struct Cli {
    /// Log level for stderr (error, warn, info, debug, trace). Logs never go to stdout.
    #[arg(long, global = true, default_value = "warn")]
    log_level: tracing::Level,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server over stdio (newline-delimited JSON-RPC on stdin/stdout).
    Serve {
        /// Longest accepted input line in bytes; longer lines are rejected with -32600.
        #[arg(long, default_value_t = rea::mcp::framing::DEFAULT_MAX_LINE_BYTES)]
        max_line_bytes: usize,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(cli.log_level)
        .with_ansi(false)
        .init();
    match cli.command {
        Command::Serve { max_line_bytes } => serve(ShellConfig {
            max_line_bytes,
            ..ShellConfig::default()
        }),
    }
}

fn serve(config: ShellConfig) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    let server = Server::new(ServerConfig {
        shell: config,
        ..ServerConfig::default()
    });
    let result = runtime.block_on(async {
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        server.serve(input, tokio::io::stdout()).await
    });
    // Blocking provider calls that overran the shutdown grace must not hold the process.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "stdio failed");
            ExitCode::FAILURE
        }
    }
}
