//! `myplugin-extender [ADDR] [LABEL] [WEIGHT]`: serves the extender on ADDR (default
//! 127.0.0.1:8713), requiring LABEL (default my-label), until killed.

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8713".into());
    let label = args.next().unwrap_or_else(|| "my-label".into());
    let weight = args.next().and_then(|w| w.parse().ok()).unwrap_or(1.0);
    let server = myplugin_extender::Server::start(&addr, &label, weight)?;
    eprintln!("myplugin-extender: serving on {}", server.url());
    loop {
        std::thread::park();
    }
}
