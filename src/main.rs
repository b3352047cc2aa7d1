use paydesk::configuration::Settings;
use paydesk::startup::Application;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    paydesk::telemetry::init();
    let settings = Settings::from_env();
    let app = Application::build(&settings).await?;
    println!("Paydesk is running at http://{}", app.addr());
    app.run_until_stopped().await
}
