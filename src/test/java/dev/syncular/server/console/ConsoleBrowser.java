package dev.syncular.server.console;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium driving the console: Debian's {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver}
 * (installed by {@code .ci/run}; elsewhere {@code SYNCULAR_TEST_CHROMIUM} and {@code SYNCULAR_TEST_CHROMEDRIVER}), given
 * explicitly so Selenium never downloads a driver; a fresh profile directory
 * per browser. Screenshots go to {@code target/console-screenshots/}.
 */
final class ConsoleBrowser implements AutoCloseable {
    static final String CHROMIUM = installed("SYNCULAR_TEST_CHROMIUM", "/usr/bin/chromium");
    static final String CHROMEDRIVER = installed("SYNCULAR_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    static final Duration WAIT = Duration.ofSeconds(30);

    final ChromeDriver driver;
    final String base;
    private final Path profile;

    ConsoleBrowser(String base) {
        this.base = base;
        try {
            profile = Files.createTempDirectory("console-chromium");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChromeOptions options = new ChromeOptions()
                .setBinary(CHROMIUM)
                .addArguments(
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-dev-shm-usage",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--no-first-run",
                        "--window-size=1400,1000",
                        "--user-data-dir=" + profile);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(CHROMEDRIVER))
                .usingAnyFreePort()
                .build();
        driver = new ChromeDriver(service, options);
    }

    /**
     * The executable {@code variable} names, else Debian's path; neither executable fails the test with how to install
     * it (the browser is the one part of the suite no Maven artifact carries).
     */
    private static String installed(String variable, String debianPath) {
        String configured = System.getenv(variable);
        String path = configured == null || configured.isBlank() ? debianPath : configured.trim();
        if (!Files.isExecutable(Path.of(path))) {
            throw new IllegalStateException("The console's browser tests drive Chromium and ChromeDriver, and " + path
                    + " is missing: on Debian or Ubuntu `apt-get install chromium chromium-driver` (.ci/run installs"
                    + " them), elsewhere set SYNCULAR_TEST_CHROMIUM and SYNCULAR_TEST_CHROMEDRIVER to the executables");
        }
        return path;
    }

    /** Opens {@code path} under the console's base. */
    ConsoleBrowser open(String path) {
        driver.get(base + path);
        return this;
    }

    /** Signs in with {@code token} and waits for the overview. */
    ConsoleBrowser signIn(String token) {
        open("/sign-in");
        if (!Files.exists(SCREENSHOTS.resolve("sign-in.png"))) {
            screenshot("sign-in");
        }
        driver.findElement(By.id("token")).sendKeys(token);
        driver.findElement(By.id("sign-in")).click();
        until(d -> d.getCurrentUrl().endsWith("/console/overview"));
        return this;
    }

    WebElement find(String css) {
        return driver.findElement(By.cssSelector(css));
    }

    /**
     * Waits (at most {@link #WAIT}) for {@code condition}, re-evaluated by Selenium's wait; an element replaced
     * meanwhile by the page's in-place refresh (console.js) is looked up again.
     */
    <T> T until(Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, WAIT)
                .ignoring(StaleElementReferenceException.class)
                .until(condition);
    }

    /** An attribute of the element at {@code css}, read in one step (the page may refresh the element). */
    String attr(String css, String name) {
        return until(d -> d.findElement(By.cssSelector(css)).getAttribute(name));
    }

    /** The text of the element at {@code css}, read in one step. */
    String text(String css) {
        return until(d -> d.findElement(By.cssSelector(css)).getText());
    }

    /** Reloads the page until {@code condition} holds (at most {@link #WAIT}): for pages that render once. */
    <T> T reloadUntil(Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, WAIT).until(d -> {
            d.navigate().refresh();
            try {
                T v = condition.apply(d);
                return v instanceof Boolean b && !b ? null : v;
            } catch (org.openqa.selenium.NoSuchElementException e) {
                return null;
            }
        });
    }

    /** Saves a screenshot of the page as {@code target/console-screenshots/<name>.png}. */
    void screenshot(String name) {
        try {
            Files.createDirectories(SCREENSHOTS);
            Files.write(SCREENSHOTS.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        driver.quit();
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // a leftover temporary profile is harmless
        }
    }
}
