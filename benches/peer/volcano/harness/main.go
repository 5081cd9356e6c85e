// Command volcano-peer times one in-process scheduling cycle of Volcano's scheduler on a
// cluster written by `tephra gen`, for comparison with `tephra bench`. It is built inside a
// Volcano checkout (benches/peer/volcano/run copies it there), so it runs that checkout's
// cache, session, actions and plugins.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"volcano.sh/volcano/cmd/scheduler/app/options"
	vcscheduler "volcano.sh/volcano/pkg/scheduler"
	_ "volcano.sh/volcano/pkg/scheduler/actions"
	"volcano.sh/volcano/pkg/scheduler/metrics"
)

// report is what one run prints: a single JSON object on stdout.
type report struct {
	Workload                string  `json:"workload"`
	PercentageNodesToFind   int32   `json:"percentage_nodes_to_find"`
	MinimumFeasibleNodes    int32   `json:"minimum_feasible_nodes"`
	MinimumPercentageToFind int32   `json:"minimum_percentage_nodes_to_find"`
	Nodes                   int     `json:"nodes"`
	Pods                    int     `json:"pods"`
	PendingPods             int     `json:"pending_pods"`
	LoadMs                  float64 `json:"load_ms"`
	cycleTiming
	// BindsDispatched: tasks the cycle queued for binding; Binds: those the fake binder got.
	BindsDispatched int `json:"binds_dispatched"`
	Binds           int `json:"binds"`
}

func main() {
	workload := flag.String("workload", "", "cluster file written by `tephra gen` (JSON stream, .gz allowed)")
	confPath := flag.String("conf", "", "scheduler configuration file (actions and tiers)")
	percentage := flag.Int("percentage-nodes-to-find", 0,
		"Volcano's --percentage-nodes-to-find: <= 0 adaptive sampling (its default), 100 every node")
	cpuProfile := flag.String("cpuprofile", "", "write a Go CPU profile of the cycle to this file")
	flag.Parse()
	if err := run(*workload, *confPath, int32(*percentage), *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "volcano-peer:", err)
		os.Exit(1)
	}
}

func run(workload, confPath string, percentage int32, cpuProfile string) error {
	if workload == "" || confPath == "" {
		return fmt.Errorf("both -workload and -conf are required")
	}
	confText, err := os.ReadFile(confPath)
	if err != nil {
		return err
	}
	actions, tiers, configurations, _, err := vcscheduler.UnmarshalSchedulerConf(string(confText))
	if err != nil {
		return fmt.Errorf("%s: %w", confPath, err)
	}

	// The server options hold the node-sampling flags; the rest keep Volcano's defaults.
	opts := options.Default()
	opts.PercentageOfNodesToFind = percentage
	// As vc-scheduler's start-up does (cmd/scheduler/app/server.go, Run).
	metrics.InitKubeSchedulerRelatedMetrics()

	start := time.Now()
	c, err := readCluster(workload)
	if err != nil {
		return err
	}
	s, err := newScheduler(c)
	if err != nil {
		return err
	}
	defer s.close()
	r := report{
		Workload:                workload,
		PercentageNodesToFind:   opts.PercentageOfNodesToFind,
		MinimumFeasibleNodes:    opts.MinNodesToFind,
		MinimumPercentageToFind: opts.MinPercentageOfNodesToFind,
		Nodes:                   len(c.nodes),
		Pods:                    len(c.pods),
		PendingPods:             c.pendingPods(),
		LoadMs:                  msSince(start),
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	r.cycleTiming = s.runCycle(actions, tiers, configurations)
	pprof.StopCPUProfile()
	r.BindsDispatched = s.dispatchedBinds()
	r.Binds = s.waitForBinds(r.BindsDispatched)
	if r.Binds != r.BindsDispatched {
		return fmt.Errorf("the cycle dispatched %d binds but the fake binder got %d within %v",
			r.BindsDispatched, r.Binds, bindWait)
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}
