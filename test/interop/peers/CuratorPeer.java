// A Curator peer for the interop tests: one CuratorFramework session, driven by line commands on
// stdin, answering JSON lines on stdout. Run as a single-file program (Java 11+):
//   java -cp <curator, zookeeper, guava, slf4j jars> CuratorPeer.java <connectString>
// Commands: "acquire <path>", "release <path>", "quit". Answers: {"event":"ready"},
// {"event":"acquired","path":...}, {"event":"released","path":...}, {"event":"error",...}.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

public class CuratorPeer {
  private static synchronized void say(String json) {
    System.out.println(json);
    System.out.flush();
  }

  public static void main(String[] args) throws Exception {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(args[0])
            .sessionTimeoutMs(10_000)
            .retryPolicy(new RetryOneTime(200))
            .build();
    client.start();
    client.blockUntilConnected();
    // Curator's mutex belongs to the thread that took it: each lock gets a thread that acquires,
    // then waits for its "release" command and releases.
    Map<String, CountDownLatch> releases = new HashMap<>();
    say("{\"event\":\"ready\"}");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split(" ");
      if (words[0].equals("quit")) break;
      String path = words[1];
      if (words[0].equals("acquire")) {
        CountDownLatch release = new CountDownLatch(1);
        synchronized (releases) {
          releases.put(path, release);
        }
        new Thread(() -> {
          InterProcessMutex mutex = new InterProcessMutex(client, path);
          try {
            mutex.acquire();
            say("{\"event\":\"acquired\",\"path\":\"" + path + "\"}");
            release.await();
            mutex.release();
            say("{\"event\":\"released\",\"path\":\"" + path + "\"}");
          } catch (Exception e) {
            say("{\"event\":\"error\",\"message\":\"" + e.getClass().getSimpleName() + "\"}");
          }
        }).start();
      } else if (words[0].equals("release")) {
        synchronized (releases) {
          releases.remove(path).countDown();
        }
      }
    }
    client.close();
    System.exit(0);
  }
}
