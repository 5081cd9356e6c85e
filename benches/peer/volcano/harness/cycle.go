package main

import (
	"fmt"
	"runtime"
	"time"

	"k8s.io/client-go/tools/record"

	schedulingapi "volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/util"
)

// schedulerName is the one the generated pods name.
const schedulerName = "volcano"

// bindWait bounds how long the harness waits, after the cycle, for Volcano's asynchronous
// bind workers to hand every dispatched bind to the fake binder.
const bindWait = 2 * time.Minute

// cycleTiming says where one scheduling cycle's time went, in milliseconds.
type cycleTiming struct {
	// OpenMs includes the cache snapshot: Volcano takes it inside OpenSession.
	OpenMs    float64            `json:"open_ms"`
	ActionsMs map[string]float64 `json:"actions_ms"`
	CloseMs   float64            `json:"close_ms"`
	TotalMs   float64            `json:"total_ms"`
}

// scheduler is Volcano's scheduler cache, loaded with a cluster, wired to fakes so nothing
// reaches an API server: binds go to a FakeBinder, status writes to a FakeStatusUpdater and
// events to a FakeRecorder without a channel (which drops them). This is how Volcano's own
// action tests build their cache (pkg/scheduler/uthelper, TestCommonStruct.createSchedulerCache).
type scheduler struct {
	cache  *cache.SchedulerCache
	binder *util.FakeBinder
	stop   chan struct{}
}

// newScheduler starts the cache's workers (its bind worker among them) and adds the objects
// through the same cache methods Volcano's informer handlers call.
func newScheduler(c *cluster) (*scheduler, error) {
	pods := len(c.pods)
	binder := util.NewFakeBinder(pods)
	sc := cache.NewCustomMockSchedulerCache(schedulerName, binder, util.NewFakeEvictor(pods),
		&util.FakeStatusUpdater{}, nil, &record.FakeRecorder{})
	s := &scheduler{cache: sc, binder: binder, stop: make(chan struct{})}
	sc.Run(s.stop)
	sc.WaitForCacheSync(s.stop)
	for _, pc := range c.priorityClasses {
		sc.AddPriorityClass(pc)
	}
	for _, q := range c.queues {
		sc.AddQueueV1beta1(q)
	}
	for _, n := range c.nodes {
		if err := sc.AddOrUpdateNode(n); err != nil {
			s.close()
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for _, pg := range c.podGroups {
		sc.AddPodGroupV1beta1(pg)
	}
	for _, p := range c.pods {
		sc.AddPod(p)
	}
	return s, nil
}

func (s *scheduler) close() {
	close(s.stop)
}

func msSince(start time.Time) float64 {
	return float64(time.Since(start).Nanoseconds()) / 1e6
}

// runCycle runs one scheduling cycle as Volcano's Scheduler.runOnce does (pkg/scheduler/scheduler.go):
// mark the configured actions enabled, open a session, execute each action, close the session.
// A garbage collection first clears what loading left, so the cycle does not pay for it.
func (s *scheduler) runCycle(actions []framework.Action, tiers []conf.Tier, configurations []conf.Configuration) cycleTiming {
	conf.EnabledActionMap = make(map[string]bool, len(actions))
	for _, a := range actions {
		conf.EnabledActionMap[a.Name()] = true
	}
	runtime.GC()

	cycleStart := time.Now()
	start := cycleStart
	ssn := framework.OpenSession(s.cache, tiers, configurations)
	t := cycleTiming{OpenMs: msSince(start), ActionsMs: make(map[string]float64, len(actions))}
	for _, a := range actions {
		start = time.Now()
		a.Execute(ssn)
		t.ActionsMs[a.Name()] = msSince(start)
	}
	start = time.Now()
	framework.CloseSession(ssn)
	t.CloseMs = msSince(start)
	t.TotalMs = msSince(cycleStart)
	return t
}

// dispatchedBinds counts the tasks the cycle handed to the cache for binding: the cache marks
// each Binding as it queues it for the bind worker.
func (s *scheduler) dispatchedBinds() int {
	s.cache.Mutex.Lock()
	defer s.cache.Mutex.Unlock()
	n := 0
	for _, job := range s.cache.Jobs {
		n += len(job.TaskStatusIndex[schedulingapi.Binding])
	}
	return n
}

// waitForBinds waits until the fake binder has received `want` binds (or bindWait passes) and
// returns how many it received.
func (s *scheduler) waitForBinds(want int) int {
	deadline := time.Now().Add(bindWait)
	for s.binder.Length() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return s.binder.Length()
}
