//! `report RUN --plot FILE` end to end: the CLI against a real server
//! holding a finished SPRT and SPSA run (simulated players) draws their
//! charts as SVG, with one point per counted result, and as a PNG that
//! decodes at the stacked size; a games run and an unknown extension are
//! refused, naming what was wrong.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use xq_tests::binary;
use xq_tests::cluster::{
    ADMIN_TOKEN, SimulatedPlayer, TempDb, TestServer, admin, create, fast_config,
    finished_sprt_and_spsa, games_spec, spawn_worker, wait_for_pairs,
};
use xq_tests::web::polylines;

/// One chart panel's size (coordinator/web/src/charts.rs).
const PANEL: (u32, u32) = (640, 280);

/// `report RUN --plot FILE`: (success, stderr).
async fn plot(url: &str, run: u64, file: &Path) -> (bool, String) {
    let (url, file) = (url.to_owned(), file.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(binary("xq-coordinator"))
            .args(["report", &run.to_string(), "--coordinator", &url])
            .args(["--token", ADMIN_TOKEN, "--plot"])
            .arg(&file)
            .output()
            .expect("run xq-coordinator report")
    })
    .await
    .expect("report task");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A directory for the plots, removed with everything in it when dropped.
struct OutDir(std::path::PathBuf);

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn png_size(path: &Path) -> (u32, u32) {
    let file = std::fs::File::open(path).expect("open png");
    let info = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG that decodes");
    let info = info.info();
    (info.width, info.height)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_plot_draws_theta_and_llr_as_svg_and_png() {
    let db = TempDb::new("report-plot");
    let out = OutDir(db.0.with_extension("plots"));
    let _ = std::fs::remove_dir_all(&out.0);
    std::fs::create_dir_all(&out.0).unwrap();
    let server =
        TestServer::start("127.0.0.1:0", &db.0, fast_config(Duration::from_secs(30))).await;
    let url = server.url();
    let mut grpc = admin(&url).await;

    let (sprt, sprt_end, spsa) = finished_sprt_and_spsa(&url, &mut grpc).await;
    let strong = Arc::new(SimulatedPlayer::first_player_stronger(60.0));

    // SPRT: one panel, the LLR from the origin plus one point per counted
    // result (leases of 8 pairs = 16 games), and both bounds.
    let svg = out.0.join("sprt.svg");
    let (ok, err) = plot(&url, sprt, &svg).await;
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let games = sprt_end.totals.as_ref().unwrap().pairs * 2;
    let lines = polylines(&text);
    assert!(
        lines.contains(&(games as usize / 16 + 1)),
        "LLR points {lines:?} for {games} games"
    );
    assert!(text.contains("lower bound -2.94") && text.contains("upper bound 2.94"));
    assert!(text.contains(&format!("height=\"{}\"", PANEL.1)));

    // SPSA: the % panel with both parameters and one absolute panel each,
    // 40 pairs in leases of 4 = 10 results plus the start.
    let svg = out.0.join("spsa.svg");
    let (ok, err) = plot(&url, spsa, &svg).await;
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let lines = polylines(&text);
    assert_eq!(
        lines.iter().filter(|&&n| n == 11).count(),
        4,
        "θ points {lines:?}"
    );
    for title in [
        "θ − start in % of c_end",
        "θ of chariot_value",
        "θ of horse_value",
    ] {
        assert!(text.contains(title), "no panel {title:?}");
    }

    let png = out.0.join("spsa.PNG");
    let (ok, err) = plot(&url, spsa, &png).await;
    assert!(ok, "{err}");
    assert_eq!(png_size(&png), (PANEL.0, 3 * PANEL.1));
    let png = out.0.join("sprt.png");
    assert!(plot(&url, sprt, &png).await.0);
    assert_eq!(png_size(&png), PANEL);

    // Refusals name the run's kind and the file.
    let (stop, worker) = spawn_worker(&url, strong, 1);
    let games = create(&mut grpc, games_spec(4, 4)).await;
    wait_for_pairs(&mut grpc, games, 4).await;
    let _ = stop.send(());
    worker.await.unwrap();
    let (ok, err) = plot(&url, games, &out.0.join("games.svg")).await;
    assert!(!ok && err.contains("a games run"), "{err}");
    assert!(!out.0.join("games.svg").exists());
    let (ok, err) = plot(&url, spsa, &out.0.join("spsa.jpg")).await;
    assert!(
        !ok && err.contains("spsa.jpg") && err.contains(".png"),
        "{err}"
    );

    server.stop().await;
}
