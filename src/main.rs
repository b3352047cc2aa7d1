use paydesk::configuration::Settings;
use paydesk::startup::Application;
use secrecy::ExposeSecret;

#[tokio::main]
async fn main() {
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
