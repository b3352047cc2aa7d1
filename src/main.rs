use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use paydesk::configuration::Settings;
use paydesk::startup::Application;
use secrecy::ExposeSecret;

/// mimalloc, not the system allocator: a portal under load allocates and
/// frees on every request and query, and glibc's malloc took a few per
/// cent of the machine in `bench/approvals.sh`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Paydesk portal. With no command it serves (configured by
/// `paydesk.toml` and `PAYDESK_*` variables; see the README).
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Work with exported audit logs, offline.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check an exported audit bundle (the "Export signed bundle" file):
    /// every record's hash and link, every checkpoint's Ed25519 signature,
    /// and that no record was edited, removed, reordered or cut off. Needs
    /// no database and no network. Exits 0 when the bundle holds up, 1 when
    /// it does not (naming the first bad record), 2 when the file cannot be
    /// read.
    Verify {
        /// The bundle (JSON lines), or - for standard input.
        file: PathBuf,
        /// The public key you expect (hex, from /audit/checkpoints); without
        /// it, the key in the bundle is used and printed for you to compare.
        #[arg(long)]
        public_key: Option<String>,
    },
}

fn main() {
    match Cli::parse().command {
        None => serve(),
        Some(Command::Audit {
            command: AuditCommand::Verify { file, public_key },
        }) => std::process::exit(verify(&file, public_key.as_deref())),
    }
}

fn verify(file: &Path, public_key: Option<&str>) -> i32 {
    let input: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(file) {
            Ok(f) => Box::new(BufReader::with_capacity(1 << 20, f)),
            Err(e) => {
                eprintln!("cannot read {}: {e}", file.display());
                return 2;
            }
        }
    };
    match paydesk::audit::bundle::verify(input, public_key) {
        Ok(v) => {
            println!("{}", v.describe());
            0
        }
        Err(broken) => {
            println!("FAILED: {broken}");
            1
        }
    }
}

#[tokio::main]
async fn serve() {
    paydesk::telemetry::init();
    let settings = match Settings::load() {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("Paydesk could not start: {e}");
            std::process::exit(1);
        }
    };
    let app = match Application::build(&settings).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Paydesk could not start: {e}");
            std::process::exit(1);
        }
    };
    println!("Paydesk is running at http://{}", app.addr());
    if let Some(url) = app.sandbox_url() {
        println!("Built-in sandbox (the demo tenant's upstream) at {url}");
    }
    match app.first_admin() {
        Some(admin) => {
            println!("First sign-in: {}", admin.email);
            println!(
                "One-time password (works for 24 hours): {}",
                admin.one_time_password.expose_secret()
            );
            println!("You will choose a new password after signing in.");
        }
        None => println!(
            "Sign in with your account (the first admin is {}).",
            paydesk::bootstrap::FIRST_ADMIN_EMAIL
        ),
    }
    if let Err(e) = app.run_until_stopped().await {
        eprintln!("Paydesk stopped with an error: {e}");
        std::process::exit(1);
    }
}
