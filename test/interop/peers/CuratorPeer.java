// A Curator peer for the interop tests: one CuratorFramework session, driven by line commands on
// stdin, answering JSON lines on stdout. Run as a single-file program (Java 11+):
//   java -cp <curator, zookeeper, guava, slf4j jars> CuratorPeer.java <connectString> [sessionTimeoutMs]
// Commands:
//   acquire <id> mutex|read|write <path>    InterProcessMutex / InterProcessReadWriteLock
//   acquire <id> lease <path> <maxLeases>   InterProcessSemaphoreV2
//   release <id>
//   latch <id> <path>                       a LeaderLatch with participant id <id>, started
//   close <id>                              closes that LeaderLatch (deletes its node)
//   quit
// Answers: {"event":"ready"}, {"event":"acquired","id":...}, {"event":"released","id":...},
// {"event":"started","id":...}, {"event":"leader","id":...}, {"event":"notLeader","id":...},
// {"event":"closed","id":...}, {"event":"error","id":...,"message":...}.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;

public class CuratorPeer {
  private static synchronized void say(String event, String id, String extra) {
    System.out.println(
        "{\"event\":\"" + event + "\"" + (id == null ? "" : ",\"id\":\"" + id + "\"") + extra + "}");
    System.out.flush();
  }

  /** Takes the lock or lease; returns what releases it (on the same thread: Curator's rule). */
  private static Runnable take(CuratorFramework client, String[] words) throws Exception {
    String kind = words[2];
    String path = words[3];
    if (kind.equals("lease")) {
      InterProcessSemaphoreV2 semaphore =
          new InterProcessSemaphoreV2(client, path, Integer.parseInt(words[4]));
      Lease lease = semaphore.acquire();
      return () -> semaphore.returnLease(lease);
    }
    InterProcessMutex mutex =
        kind.equals("mutex")
            ? new InterProcessMutex(client, path)
            : kind.equals("read")
                ? new InterProcessReadWriteLock(client, path).readLock()
                : new InterProcessReadWriteLock(client, path).writeLock();
    mutex.acquire();
    return () -> {
      try {
        mutex.release();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    };
  }

  /** Starts a LeaderLatch that says when it leads and when it stops leading. */
  private static LeaderLatch latch(CuratorFramework client, String id, String path)
      throws Exception {
    LeaderLatch latch = new LeaderLatch(client, path, id);
    latch.addListener(
        new LeaderLatchListener() {
          @Override
          public void isLeader() {
            say("leader", id, "");
          }

          @Override
          public void notLeader() {
            say("notLeader", id, "");
          }
        });
    latch.start();
    return latch;
  }

  public static void main(String[] args) throws Exception {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(args[0])
            .sessionTimeoutMs(args.length > 1 ? Integer.parseInt(args[1]) : 10_000)
            .retryPolicy(new RetryOneTime(200))
            .build();
    client.start();
    client.blockUntilConnected();
    Map<String, CountDownLatch> releases = new HashMap<>();
    Map<String, LeaderLatch> latches = new HashMap<>();
    say("ready", null, "");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split(" ");
      if (words[0].equals("quit")) break;
      String id = words[1];
      if (words[0].equals("acquire")) {
        CountDownLatch release = new CountDownLatch(1);
        synchronized (releases) {
          releases.put(id, release);
        }
        // One thread per hold: it takes the lock, waits for "release <id>", and releases.
        new Thread(() -> {
          try {
            Runnable releaser = take(client, words);
            say("acquired", id, "");
            release.await();
            releaser.run();
            say("released", id, "");
          } catch (Exception e) {
            say("error", id, ",\"message\":\"" + e.getClass().getSimpleName() + "\"");
          }
        }).start();
      } else if (words[0].equals("latch") || words[0].equals("close")) {
        try {
          if (words[0].equals("latch")) latches.put(id, latch(client, id, words[2]));
          else latches.remove(id).close();
          say(words[0].equals("latch") ? "started" : "closed", id, "");
        } catch (Exception e) {
          say("error", id, ",\"message\":\"" + e.getClass().getSimpleName() + "\"");
        }
      } else if (words[0].equals("release")) {
        synchronized (releases) {
          releases.remove(id).countDown();
        }
      }
    }
    for (LeaderLatch latch : latches.values()) latch.close();
    client.close();
    System.exit(0);
  }
}
